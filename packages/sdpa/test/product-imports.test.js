/**
 * The product imports only from below it: @fa/core, @fa/io and @fa/reference. The lesson packages (the rungs) may
 * change only to fix defects, so the product must never depend on them; plan code both need lives in @fa/core.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
const LESSONS = ['@fa/naive', '@fa/fused', '@fa/optimized', '@fa/tensor', '@fa/ladder'];
const root = new URL('..', import.meta.url).pathname;
function sourceFiles(dir) {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        return entry.isDirectory() ? sourceFiles(path) : /\.(ts|wgsl)$/.test(entry.name) ? [path] : [];
    });
}
describe('@fa/sdpa, the product', () => {
    it('imports no lesson package in its sources', () => {
        const offenders = sourceFiles(join(root, 'src')).flatMap((file) => LESSONS.filter((lesson) => new RegExp(`from ['"]${lesson}['"/]`).test(readFileSync(file, 'utf8'))).map((lesson) => `${file.slice(root.length)} imports ${lesson}`));
        expect(offenders).toEqual([]);
    });
    it('depends on no lesson package', () => {
        const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
        expect(Object.keys(manifest.dependencies ?? {}).filter((name) => LESSONS.includes(name))).toEqual([]);
    });
});
//# sourceMappingURL=product-imports.test.js.map