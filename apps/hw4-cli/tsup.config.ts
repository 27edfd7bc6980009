import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

const { version } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig(packageBuild({ cli: 'src/cli.ts' }, { dts: false, define: { __HW4_CLI_VERSION__: JSON.stringify(version) } }));
