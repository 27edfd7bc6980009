import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { packageBuild, rungEntries } from '../../tsup.shared.js';

// The index and one entry per rung, code shared through chunks: importing one rung bundles only that rung's kernel.
export default defineConfig(packageBuild({ index: 'src/index.ts', ...rungEntries(fileURLToPath(new URL('.', import.meta.url))) }, { splitting: true }));
