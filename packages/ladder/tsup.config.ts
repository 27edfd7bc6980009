import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

/** The browser entry bundles ladder.ts with the Node-only '@fa/reference/node' swapped for its browser stand-in. */
const browserCpu = fileURLToPath(new URL('src/browser-cpu.ts', import.meta.url));

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }),
  packageBuild(
    { browser: 'src/browser.ts' },
    {
      platform: 'browser',
      target: 'es2022',
      clean: false,
      noExternal: [/^@fa\/reference\/node$/],
      esbuildPlugins: [
        {
          name: 'browser-cpu',
          setup(build) {
            build.onResolve({ filter: /^@fa\/reference\/node$/ }, () => ({ path: browserCpu }));
          },
        },
      ],
    },
  ),
]);
