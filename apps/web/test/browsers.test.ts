/**
 * The teaching page in real browsers: headless Chromium (WebGPU on its SwiftShader adapter) and Firefox ESR (WebGPU
 * on lavapipe) load the built page with `?shape=2,40,16&autorun=1` and wait for `window.ladderResult`. Every rung
 * must pass or be skipped with a reason, and several GPU rungs must pass. Chromium's run saves a screenshot. Then the
 * page's behaviour: speedups compare like with like, the software adapter is named and the H100 numbers shown, a
 * skipped rung's reason stays on one line, a diff opens on code with the header comment folded, the ladder is drawn
 * as a tree and each rung's diff is against its parent (rung 23's against rung 17), a bad address runs nothing, a
 * long run is estimated and not autorun, Stop ends a run (CPU or GPU rung) and the page works after it, and the
 * colours follow a dark scheme (Chromium, which emulates it). The scaling sweep runs and is drawn (Firefox: the page's
 * code is the same in both, and Chromium's SwiftShader is the slower adapter).
 * A missing browser skips its tests with the reason, unless FA_REQUIRE_BROWSERS=1 makes that a failure.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type LaunchOptions, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFolder, type StaticServer } from './static-server.js';

interface Entry {
  id: string;
  status: 'pass' | 'fail' | 'skipped';
  maxAbsError: number | null;
  ms: number | null;
  gpuMs: number | null;
  wallMs: number | null;
  speedup: number | null;
  speedupBasis: 'gpu' | 'wall' | null;
  reason?: string;
}

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const screenshots = fileURLToPath(new URL('../test-output', import.meta.url));
const SHAPE = '2,40,16';
/** The GPU rungs each browser's software adapter must run and pass at least. */
const MIN_GPU_PASSES = 8;
const requireBrowsers = process.env.FA_REQUIRE_BROWSERS === '1';
process.env.PUPPETEER_SKIP_DOWNLOAD = '1';

interface BrowserCase {
  name: string;
  executables: string[];
  options: (executablePath: string) => LaunchOptions;
  screenshot?: string;
  /** Whether puppeteer can emulate `prefers-color-scheme` there. */
  emulatesColorScheme?: boolean;
  /**
   * Whether the page's scaling sweep runs there. Its code is the page's own, the same in every browser, and the GPU rung
   * it times runs in each browser's ladder test; on Chromium's SwiftShader the sweep took 43 s of this file's 167
   * (docs/ci.md), on Firefox's adapter 19.
   */
  runsSweep?: boolean;
}

const BROWSERS: BrowserCase[] = [
  {
    name: 'Chromium',
    executables: ['/usr/lib/chromium/chromium-headless-shell', '/usr/lib/chromium/chromium'],
    options: (executablePath) => ({
      executablePath,
      headless: executablePath.endsWith('headless-shell') ? 'shell' : true,
      args: ['--no-sandbox', '--enable-unsafe-webgpu'],
    }),
    screenshot: 'chromium.png',
    emulatesColorScheme: true,
  },
  {
    name: 'Firefox ESR',
    executables: ['/usr/lib/firefox-esr/firefox-esr'],
    options: (executablePath) => ({
      browser: 'firefox',
      executablePath,
      headless: true,
      extraPrefsFirefox: { 'dom.webgpu.enabled': true, 'gfx.webgpu.ignore-blocklist': true },
    }),
    runsSweep: true,
  },
];

let server: StaticServer | undefined;
beforeAll(async () => {
  if (!existsSync(`${dist}/index.html`)) throw new Error(`the page is not built (${dist}/index.html missing): run npm test, or pnpm --filter @fa/web build`);
  server = await serveFolder(dist);
});
afterAll(async () => {
  await server?.close();
});

/** A page of the browser at `query`, with its console and errors collected into `log`. */
async function open(browser: Browser, query: string, log: string[]): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (message) => log.push(`console: ${message.text()}`));
  page.on('pageerror', (error) => log.push(`page error: ${String(error)}`));
  await page.setViewport({ width: 1400, height: 1100 });
  await page.goto(`${server?.url ?? ''}${query}`);
  return page;
}

async function resultOf(page: Page, timeout = 240_000): Promise<Entry[]> {
  await page.waitForFunction(() => window.ladderResult !== undefined, { timeout, polling: 100 });
  return (await page.evaluate(() => window.ladderResult)) as Entry[];
}

/** Sets the form (shape, rungs) as a reader would and presses Run. */
async function runFromForm(page: Page, shape: [number, number, number], impl: string): Promise<void> {
  await page.evaluate(
    (values: string[], rung: string) => {
      const form = document.getElementById('controls') as HTMLFormElement;
      ['B', 'N', 'd'].forEach((name, k) => {
        (form.elements.namedItem(name) as HTMLInputElement).value = values[k] ?? '';
      });
      (form.elements.namedItem('impl') as HTMLSelectElement).value = rung;
      form.dispatchEvent(new Event('input'));
    },
    shape.map(String),
    impl,
  );
  await page.click('#run');
}

const rowStatus = (page: Page, id: string): Promise<string> => page.$eval(`tr[data-rung="${id}"]`, (tr) => tr.className);

describe('the teaching page in real browsers', () => {
  for (const browserCase of BROWSERS) {
    const executablePath = browserCase.executables.find((path) => existsSync(path));
    const missing = `${browserCase.name} is not installed (looked for ${browserCase.executables.join(', ')}; bash .ci/install-browsers.sh installs it)`;
    const skip = executablePath === undefined && !requireBrowsers;
    const title = (what: string): string => `${browserCase.name} ${what}${executablePath ? '' : ` (skipped: ${missing})`}`;

    describe.skipIf(skip)(browserCase.name, () => {
      let browser: Browser | undefined;
      const launched = async (): Promise<Browser> => {
        if (executablePath === undefined) throw new Error(`${missing}, and FA_REQUIRE_BROWSERS=1 requires it`);
        browser ??= await puppeteer.launch({ ...browserCase.options(executablePath), timeout: 60_000 });
        return browser;
      };
      afterAll(async () => {
        await browser?.close();
      });

      it(title('runs the ladder'), async () => {
        const log: string[] = [];
        const page = await open(await launched(), `?shape=${SHAPE}&autorun=1`, log);
        const result = await resultOf(page);
        const adapter = await page.evaluate(() => document.getElementById('adapter')?.textContent ?? '');
        const summary = [adapter, ...result.map((r) => `${r.id}: ${r.status}${r.maxAbsError === null ? '' : ` ${r.maxAbsError.toExponential(1)}`}${r.reason ? ` (${r.reason})` : ''}`), ...log].join('\n');
        console.log(`${browserCase.name} on ${SHAPE}:\n${summary}`);
        expect(result.length, summary).toBeGreaterThan(0);
        expect(result.filter((r) => r.status === 'fail'), summary).toEqual([]);
        expect(result.filter((r) => r.status === 'skipped' && !r.reason), summary).toEqual([]);
        expect(result.filter((r) => r.id === 'seq-attention' && r.status === 'pass'), summary).toHaveLength(1);
        const gpuPasses = result.filter((r) => r.status === 'pass' && !['seq-attention', 'seq-flash', 'cpu'].includes(r.id));
        expect(gpuPasses.length, summary).toBeGreaterThanOrEqual(MIN_GPU_PASSES);

        // Speedups like with like: naive (GPU time) over seq-flash (CPU, wall time only) is wall over wall, and marked.
        const byId = new Map(result.map((r) => [r.id, r]));
        const naive = byId.get('naive');
        const seqFlash = byId.get('seq-flash');
        expect(naive?.speedupBasis, summary).toBe('wall');
        expect(naive?.speedup).toBeCloseTo((seqFlash?.wallMs ?? 0) / (naive?.wallMs ?? 1), 6);
        expect(await page.$eval('tr[data-rung="naive"] td:nth-child(7)', (td) => td.textContent)).toMatch(/× wall$/);
        for (const entry of gpuPasses.filter((r) => r.id !== 'naive')) expect(entry.speedupBasis, entry.id).toBe('gpu');

        // A software adapter is named as one, with the H100's numbers beside the reader's.
        expect(await page.$eval('#software', (p) => !(p as HTMLElement).hidden && p.textContent.includes('swing'))).toBe(true);
        expect(await page.$eval('tr[data-rung="vec4"] td.h100', (td) => Number(td.textContent))).toBeGreaterThan(100);
        expect(await page.$eval('#reference', (p) => p.textContent)).toMatch(/H100 GFLOP\/s: hw4-cli bench on .*h100/i);

        // Every row is one line: a long reason ends in an ellipsis, whole in the cell's tooltip.
        const rows = await page.$$eval('#results tbody tr', (trs) =>
          trs.map((tr) => {
            const verdict = tr.querySelector('td.verdict') as HTMLTableCellElement;
            return { id: tr.dataset.rung, height: tr.getBoundingClientRect().height, text: verdict.textContent, title: verdict.title, cut: verdict.scrollWidth > verdict.clientWidth };
          }),
        );
        const heights = rows.map((r) => r.height);
        expect(Math.max(...heights) - Math.min(...heights), JSON.stringify(rows)).toBeLessThan(2);
        const skipped = rows.filter((r) => r.text.startsWith('skipped'));
        expect(skipped.length).toBeGreaterThan(0);
        for (const row of skipped) expect(row.title, row.id).toBe(row.text);
        expect(skipped.some((r) => r.cut)).toBe(true);

        // A rung's diff opens on code: the header comment's diff is there, folded.
        await page.click('tr[data-rung="vec4"]');
        const diff = await page.$eval('#details section.source', (section) => ({
          folded: section.querySelector('details.diff-header')?.hasAttribute('open') === false,
          header: section.querySelector('details.diff-header pre.diff')?.textContent ?? '',
          code: section.querySelector(':scope > pre.diff')?.textContent ?? '',
        }));
        expect(diff.folded).toBe(true);
        expect(diff.header).toContain('Rung 8 — vec4');
        expect(diff.code).not.toContain('Rung 8 — vec4');
        expect(diff.code).toMatch(/vec4<f32>/);

        if (browserCase.screenshot) {
          mkdirSync(screenshots, { recursive: true });
          await page.screenshot({ path: `${screenshots}/${browserCase.screenshot}`, fullPage: true });
        }
        await page.close();
      }, 300_000);

      it.skipIf(browserCase.runsSweep !== true)(title(`runs the scaling sweep of a GPU rung and draws it${browserCase.runsSweep === true ? '' : " (skipped: the page's sweep runs in Firefox ESR; its code is the same here, and this browser's ladder test runs the rung)"}`), async () => {
        const log: string[] = [];
        const page = await open(await launched(), '?shape=2,40,16&impl=fused-split-q&scaling=1', log);
        await page.waitForFunction(() => window.scalingResult !== undefined || window.scalingError !== undefined, { timeout: 240_000, polling: 100 });
        const { result, error } = await page.evaluate(() => ({ result: window.scalingResult, error: window.scalingError }));
        const summary = [error ?? '', JSON.stringify(result), ...log].join('\n');
        expect(error, summary).toBeUndefined();
        expect(result?.rung).toBe('fused-split-q');
        expect(result?.n.map((p) => p.value)).toEqual([64, 128, 256, 512, 1024]);
        expect(result?.batch.map((p) => p.value)).toEqual([1, 2, 4, 8, 16]);
        expect([...(result?.n ?? []), ...(result?.batch ?? [])].every((p) => p.ms > 0 && p.maxAbsError < 1e-4), summary).toBe(true);
        const drawn = await page.$$eval('#scaling-charts svg', (svgs) => svgs.map((svg) => svg.querySelectorAll('circle').length));
        expect(drawn).toEqual([5, 5]);
        expect(await page.$eval('#scaling-note', (p) => p.textContent)).toMatch(/Slopes of log\(time\) over log\(value\)/);
      });

      it(title('draws the ladder as a tree and diffs each rung against its parent'), async () => {
        const log: string[] = [];
        const page = await open(await launched(), `?shape=${SHAPE}`, log);
        await page.waitForSelector('#tree li[data-rung="resident-o"]');
        const tree = await page.$eval('#tree ul.tree', (ul) => ({
          branches: [...ul.querySelectorAll('.branch-name')].map((name) => name.textContent),
          matrixUnit: [...(ul.querySelectorAll('li.branch')[1]?.querySelectorAll('li[data-rung]') ?? [])].map((li) => (li as HTMLElement).dataset.rung),
          underLeanLoop: [...ul.querySelectorAll('li[data-rung="lean-loop"] > ul > li')].map((li) => (li as HTMLElement).dataset.rung),
        }));
        expect(tree.branches).toEqual(['trunk', 'matrix-unit branch', 'fp32 branch']);
        expect(tree.matrixUnit).toEqual(['f16-matrix', 'compensated-matrix', 'staged-matrix', 'resident-o', 'f16-resident']);
        expect(tree.underLeanLoop).toEqual(['four-rows', 'split-softmax']);

        // Rung 23 grows from rung 17, past the fp32 branch: its diff is against rung 17's kernel.
        await page.click('#tree li[data-rung="staged-matrix"] > button');
        const source = (): Promise<{ heading: string; code: string }> =>
          page.$eval('#details section.source', (section) => ({
            heading: section.querySelector('h3')?.textContent ?? '',
            code: section.querySelector(':scope > pre.diff')?.textContent ?? '',
          }));
        const staged = await source();
        expect(staged.heading).toMatch(/^WGSL, against its parent, rung 17 compensated-matrix: \+\d+ −\d+ lines of code$/);
        expect(await page.$eval('#tree li[data-rung="staged-matrix"] > button', (b) => b.getAttribute('aria-current'))).toBe('true');
        expect(await page.$$eval('#tree .tree-note', (notes) => notes.map((n) => (n.parentElement as HTMLElement).dataset.rung))).toEqual(['compensated-matrix']);
        // naive's parent is a CPU rung: no WGSL to diff against, the whole kernel.
        await page.click('tr[data-rung="naive"]');
        const naive = await source();
        expect(naive.heading).toBe('WGSL (its parent, rung 2 seq-flash, is a CPU rung: the whole kernel)');
        expect(naive.code).toContain('Changed from seq-flash');
        expect(log.filter((line) => line.startsWith('page error'))).toEqual([]);
        await page.close();
      }, 120_000);

      it(title('runs nothing on a bad shape in the address, and says why'), async () => {
        const log: string[] = [];
        const page = await open(await launched(), '?shape=abc&autorun=1', log);
        expect(await resultOf(page, 60_000), log.join('\n')).toEqual([]);
        expect(await page.evaluate(() => window.ladderError)).toMatch(/shape "abc"/);
        // Give a wrongly started run time to show itself: no rung may leave the waiting state.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(await page.$$eval('#results tbody tr', (trs) => trs.filter((tr) => !tr.classList.contains('status-waiting')).length)).toBe(0);
        await page.close();
      }, 120_000);

      it.skipIf(!browserCase.emulatesColorScheme)(title(`follows a dark colour scheme${browserCase.emulatesColorScheme ? '' : ' (skipped: puppeteer cannot emulate prefers-color-scheme here)'}`), async () => {
        const log: string[] = [];
        const page = await open(await launched(), '', log);
        const luminance = (): Promise<{ background: number; text: number }> =>
          page.evaluate(() => {
            const of = (color: string): number => {
              const [r = 0, g = 0, b = 0] = (color.match(/[\d.]+/g) ?? []).map(Number);
              return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
            };
            const style = getComputedStyle(document.documentElement);
            return { background: of(style.backgroundColor), text: of(style.color) };
          });
        await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
        const dark = await luminance();
        expect(dark.background).toBeLessThan(0.15);
        expect(dark.text).toBeGreaterThan(0.7);
        await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
        const light = await luminance();
        expect(light.background).toBeGreaterThan(0.9);
        expect(light.text).toBeLessThan(0.2);
        await page.close();
      }, 120_000);
      // Last: stopping a GPU rung leaves its submitted work to the GPU, which a software adapter takes a while to finish.
      it(title('estimates a long run and does not autorun it; Stop ends a run on a CPU or a GPU rung'), async () => {
        const log: string[] = [];
        const page = await open(await launched(), '?shape=1,100000,64&autorun=1', log);
        expect(await resultOf(page, 60_000), log.join('\n')).toEqual([]);
        expect(await page.evaluate(() => window.ladderError)).toMatch(/^not started: this run would take about .* here/);
        expect(await page.$eval('#estimate', (p) => p.classList.contains('warn') && p.textContent.startsWith('A long run'))).toBe(true);
        const estimates = await page.$$eval('#results tbody td.estimate', (tds) => tds.map((td) => td.textContent));
        expect(estimates.length, estimates.join()).toBeGreaterThan(5);
        expect(estimates.every((text) => text.startsWith('~'))).toBe(true);

        // Stop while a CPU rung runs (terminating the worker), then while a GPU rung runs (its submitted work is left to
        // the GPU): each time the run ends at once, the rung and those after it marked as stopped.
        const shape: [number, number, number] = [1, 6000, 64];
        for (const rung of ['seq-attention', 'naive']) {
          await runFromForm(page, shape, rung === 'naive' ? 'naive' : '');
          await page.waitForFunction((id: string) => document.querySelector(`tr[data-rung="${id}"]`)?.classList.contains('status-running'), { timeout: 120_000, polling: 100 }, rung);
          const stoppedAt = Date.now();
          await page.click('#stop');
          const result = await resultOf(page, 30_000);
          expect(Date.now() - stoppedAt, `${rung}: Stop took too long`).toBeLessThan(5000);
          const entry = result.find((r) => r.id === rung);
          expect(entry, JSON.stringify(result)).toMatchObject({ status: 'skipped', reason: 'stopped by the reader while it ran' });
          expect(result.filter((r) => r.status === 'pass' || r.status === 'fail')).toEqual([]);
          expect(await rowStatus(page, rung)).toContain('status-skipped');
          expect(await page.$eval('#stop', (button) => (button as HTMLButtonElement).disabled)).toBe(true);
        }
        // The page works after a stop: a small run of a CPU rung (a GPU rung would wait for the stopped one's work).
        await runFromForm(page, [2, 40, 16], 'seq-flash');
        await page.waitForFunction(() => (window.ladderResult?.length ?? 0) > 0, { timeout: 60_000, polling: 100 });
        expect((await page.evaluate(() => window.ladderResult))?.find((r) => r.id === 'seq-flash')?.status).toBe('pass');
        await page.close();
      }, 300_000);

    });
  }
});
