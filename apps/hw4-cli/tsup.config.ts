import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

const { version } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as { version: string };

// Two files: the launcher (launch.js) loads main (cli.js) only in the process that runs the command, so a parent that
// merely filters a child's stderr starts fast.
export default defineConfig(
  packageBuild(
    { launch: 'src/launch.ts', cli: 'src/cli.ts' },
    { dts: false, external: ['./cli.js'], define: { __HW4_CLI_VERSION__: JSON.stringify(version) } },
  ),
);
