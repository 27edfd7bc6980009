import { defineConfig } from 'tsup';
import { packageBuild } from '../tsup.shared.js';

// One file: the command line of every experiment (src/cli.ts); scripts/bundle.mjs bundles the same entry.
export default defineConfig(packageBuild({ cli: 'src/cli.ts' }, { dts: false, external: ['webgpu'] }));
