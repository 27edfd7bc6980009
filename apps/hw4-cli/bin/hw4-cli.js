#!/usr/bin/env node
// Launcher: runs the built CLI, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/launch.js', import.meta.url));
if (!existsSync(built)) {
  process.stderr.write('hw4-cli: not built yet; run `npx pnpm@10.34.9 build` (or `npm run quickstart`) in the repository root\n');
  process.exit(70);
}
await import(built);
