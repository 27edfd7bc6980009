/**
 * A browser app pays only for the rungs it imports: esbuild bundles (minified, as an app ships) `import { vec4 }
 * from '@fa/optimized'` from the built dist files, and the bundle must hold vec4 and no other rung of the package,
 * at a fraction of the whole family's size. The rung packages build one entry per rung with shared chunks
 * (tsup.shared.ts `rungEntries`), so the index only re-exports, and `sideEffects: false` lets a bundler drop the rest;
 * `@fa/optimized/vec4` (one subpath export per rung) gives the same without relying on that.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
const packagesDir = fileURLToPath(new URL('../../', import.meta.url));

async function minified(contents: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: here, loader: 'ts' },
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

/** The rung ids of a package: its src/NN-id folders. */
const rungIds = (name: string): string[] =>
  readdirSync(`${packagesDir}/${name}/src`)
    .map((folder) => /^\d\d-([a-z0-9-]+)$/.exec(folder)?.[1])
    .filter((id): id is string => id !== undefined);

/** The rungs whose descriptors are in a bundle (each keeps its `id:"…"`). */
const rungsIn = (bundle: string, ids: readonly string[]): string[] => ids.filter((id) => bundle.includes(`id:"${id}"`));

const kb = (text: string): string => `${(text.length / 1000).toFixed(1)} KB`;

describe('tree-shaking the rung packages', () => {
  const optimized = rungIds('optimized');
  const fused = rungIds('fused');

  it('every rung folder has its subpath export and dist entry', () => {
    for (const name of ['fused', 'optimized', 'tensor']) {
      const exports = (JSON.parse(readFileSync(`${packagesDir}/${name}/package.json`, 'utf8')) as { exports: Record<string, unknown> }).exports;
      expect(Object.keys(exports).sort(), name).toEqual(['.', ...rungIds(name).map((id) => `./${id}`)].sort());
      const dist = readdirSync(`${packagesDir}/${name}/dist`);
      for (const id of rungIds(name)) expect(dist, `${name}: dist/${id}.js (run the build)`).toContain(`${id}.js`);
    }
  });

  it("importing vec4 from @fa/optimized bundles vec4 alone, a fraction of the family's size", async () => {
    const whole = await minified(`import * as rungs from '@fa/optimized'; console.log(rungs);`);
    const one = await minified(`import { vec4 } from '@fa/optimized'; console.log(vec4);`);
    const subpath = await minified(`import { vec4 } from '@fa/optimized/vec4'; console.log(vec4);`);
    console.log(`minified: the whole of @fa/optimized ${kb(whole)}, { vec4 } from the index ${kb(one)}, from @fa/optimized/vec4 ${kb(subpath)}`);
    expect(rungsIn(whole, optimized)).toEqual(optimized);
    for (const bundle of [one, subpath]) {
      expect(rungsIn(bundle, optimized)).toEqual(['vec4']);
      // vec4 uses the fused family's tile plan (@fa/fused's tiles.ts), not its rungs: no fused rung.
      expect(rungsIn(bundle, fused)).toEqual([]);
      expect(bundle.length).toBeLessThan(whole.length / 4);
    }
  });

  it('importing one tensor rung leaves the other tensor rungs out', async () => {
    const tensor = rungIds('tensor');
    const one = await minified(`import { f16Matrix } from '@fa/tensor'; console.log(f16Matrix);`);
    expect(rungsIn(one, tensor)).toEqual(['f16-matrix']);
  });
});
