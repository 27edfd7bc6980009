import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

export default defineConfig(packageBuild({ cli: 'src/cli.ts' }, { dts: false }));
