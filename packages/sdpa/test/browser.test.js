/**
 * The awkward cases in headless Chromium (WebGPU on its SwiftShader adapter): conformance.ts bundled for the browser
 * and run there, each within the same limits as in Node. A missing browser skips with the reason, unless
 * FA_REQUIRE_BROWSERS=1 makes that a failure.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import puppeteer from 'puppeteer-core';
import { afterAll, describe, expect, it } from 'vitest';
/** The page's global the entry leaves its results in. */
const pageResult = () => globalThis.sdpaResult;
const CHROMIUM = ['/usr/lib/chromium/chromium-headless-shell', '/usr/lib/chromium/chromium'];
const executablePath = CHROMIUM.find((path) => existsSync(path));
const requireBrowsers = process.env.FA_REQUIRE_BROWSERS === '1';
process.env.PUPPETEER_SKIP_DOWNLOAD = '1';
const folder = mkdtempSync(join(tmpdir(), 'fa-sdpa-browser-'));
afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
});
/** The entry bundled for a browser, with a page that loads it, served on a free local port. */
async function servePage() {
    await build({
        entryPoints: [fileURLToPath(new URL('./browser-entry.ts', import.meta.url))],
        bundle: true,
        platform: 'browser',
        format: 'esm',
        conditions: ['source'],
        loader: { '.wgsl': 'text' },
        outfile: join(folder, 'entry.js'),
        logLevel: 'silent',
    });
    writeFileSync(join(folder, 'index.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="entry.js"></script>');
    const server = createServer((request, response) => {
        const name = request.url === '/entry.js' ? 'entry.js' : 'index.html';
        response.writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/html' });
        response.end(readFileSync(join(folder, name)));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => { resolve(); })) };
}
describe('attention-fp32 in headless Chromium', () => {
    const missing = `Chromium is not installed (looked for ${CHROMIUM.join(', ')}; bash .ci/install-browsers.sh installs it)`;
    it.skipIf(executablePath === undefined && !requireBrowsers)(`runs the awkward cases${executablePath ? '' : ` (skipped: ${missing})`}`, async () => {
        if (executablePath === undefined)
            throw new Error(`${missing}, and FA_REQUIRE_BROWSERS=1 requires it`);
        const page = await servePage();
        const browser = await puppeteer.launch({ executablePath, headless: executablePath.endsWith('headless-shell') ? 'shell' : true, args: ['--no-sandbox', '--enable-unsafe-webgpu'], timeout: 60_000 });
        try {
            const tab = await browser.newPage();
            const log = [];
            tab.on('pageerror', (error) => log.push(`page error: ${String(error)}`));
            await tab.goto(page.url);
            await tab.waitForFunction(() => globalThis.sdpaResult !== undefined, { timeout: 540_000, polling: 500 });
            const result = (await tab.evaluate(pageResult));
            const summary = [result.adapter, ...result.cases.map((c) => `${c.name} (${c.dtype}): ${c.problem ?? `error ${c.error?.toExponential(1)} (limit ${c.limit?.toExponential(1)}), lse ${c.lseError?.toExponential(1)}`}`), ...log].join('\n');
            console.log(`headless Chromium:\n${summary}`);
            expect(result.cases.length, summary).toBeGreaterThan(0);
            expect(result.cases.filter((c) => c.dtype === 'f16'), summary).toHaveLength(2);
            // SwiftShader's limits decline four cases in one line: the two at d = 256 (on attention-fp32 and on the default
            // kernel) need row groups of 8 (its subgroups have 4 invocations), and the two with mod buffers beside the
            // kernel's 10 pass its 10 storage buffers per stage.
            const adapterLimit = /does not split into at most \d+ parts|pass this GPU's \d+ storage buffers per stage/;
            const ran = result.cases.filter((c) => c.problem === undefined || !adapterLimit.test(c.problem));
            expect(result.cases.length - ran.length, summary).toBeLessThanOrEqual(4);
            for (const c of ran) {
                expect(c.problem, `${c.name}\n${summary}`).toBeUndefined();
                expect(c.error, `${c.name}\n${summary}`).toBeLessThanOrEqual(c.limit ?? 0);
                expect(c.lseError, `${c.name}\n${summary}`).toBeLessThanOrEqual(c.lseLimit ?? 0);
            }
        }
        finally {
            await browser.close();
            await page.close();
        }
    }, 600_000);
});
//# sourceMappingURL=browser.test.js.map