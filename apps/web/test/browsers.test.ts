/**
 * The teaching page in real browsers: headless Chromium (WebGPU on its SwiftShader adapter) and Firefox ESR (WebGPU
 * on lavapipe) load the built page with `?shape=2,40,16&autorun=1` and wait for `window.ladderResult`. Every rung
 * must pass or be skipped with a reason, and several GPU rungs must pass. Chromium's run saves a screenshot.
 * A missing browser skips its test with the reason, unless FA_REQUIRE_BROWSERS=1 makes that a failure.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import puppeteer, { type LaunchOptions } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFolder, type StaticServer } from './static-server.js';

interface Entry {
  id: string;
  status: 'pass' | 'fail' | 'skipped';
  maxAbsError: number | null;
  ms: number | null;
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

async function ladderIn(browserCase: BrowserCase, executablePath: string): Promise<{ result: Entry[]; adapter: string; log: string[] }> {
  const browser = await puppeteer.launch({ ...browserCase.options(executablePath), timeout: 60_000 });
  const log: string[] = [];
  try {
    const page = await browser.newPage();
    page.on('console', (message) => log.push(`console: ${message.text()}`));
    page.on('pageerror', (error) => log.push(`page error: ${String(error)}`));
    await page.setViewport({ width: 1400, height: 1100 });
    await page.goto(`${server?.url ?? ''}?shape=${SHAPE}&autorun=1`);
    await page.waitForFunction(() => window.ladderResult !== undefined, { timeout: 240_000, polling: 250 });
    const result = (await page.evaluate(() => window.ladderResult)) as Entry[];
    const adapter = await page.evaluate(() => document.getElementById('adapter')?.textContent ?? '');
    if (browserCase.screenshot) {
      // A rung whose WGSL differs from the one below in one idea, to show the diff beside the table.
      await page.click('tr[data-rung="vec4"]');
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: `${screenshots}/${browserCase.screenshot}`, fullPage: true });
    }
    return { result, adapter, log };
  } finally {
    await browser.close();
  }
}

describe('the teaching page in real browsers', () => {
  for (const browserCase of BROWSERS) {
    const executablePath = browserCase.executables.find((path) => existsSync(path));
    const missing = `${browserCase.name} is not installed (looked for ${browserCase.executables.join(', ')}; bash .ci/install-browsers.sh installs it)`;
    it.skipIf(executablePath === undefined && !requireBrowsers)(`${browserCase.name} runs the ladder${executablePath ? '' : ` (skipped: ${missing})`}`, async () => {
      if (executablePath === undefined) throw new Error(`${missing}, and FA_REQUIRE_BROWSERS=1 requires it`);
      const { result, adapter, log } = await ladderIn(browserCase, executablePath);
      const summary = [adapter, ...result.map((r) => `${r.id}: ${r.status}${r.maxAbsError === null ? '' : ` ${r.maxAbsError.toExponential(1)}`}${r.reason ? ` (${r.reason})` : ''}`), ...log].join('\n');
      console.log(`${browserCase.name} on ${SHAPE}:\n${summary}`);
      expect(result.length, summary).toBeGreaterThan(0);
      expect(result.filter((r) => r.status === 'fail'), summary).toEqual([]);
      expect(result.filter((r) => r.status === 'skipped' && !r.reason), summary).toEqual([]);
      expect(result.filter((r) => r.id === 'seq-attention' && r.status === 'pass'), summary).toHaveLength(1);
      const gpuPasses = result.filter((r) => r.status === 'pass' && !['seq-attention', 'seq-flash', 'cpu'].includes(r.id));
      expect(gpuPasses.length, summary).toBeGreaterThanOrEqual(MIN_GPU_PASSES);
    }, 300_000);
  }
});
