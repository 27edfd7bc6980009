/**
 * hw4-cli entry. A command that may start the GPU runs as a child process behind the stderr filter
 * (stderr-filter.ts), unless an earlier filtered run found Dawn quiet on this machine (quiet-dawn.ts); this launcher
 * decides that before loading anything else, so a filtering parent costs one Node start and no more. Everything else
 * runs main (cli.ts) in this process. Under npx, the process here stops when npx does (parent-watch.ts).
 */
import { stopWithNpx } from './parent-watch.js';
import { knownQuiet, quietKey, recordQuiet } from './quiet-dawn.js';
import { runFiltered, wantsFilter } from './stderr-filter.js';

stopWithNpx();
// --bounds-checks changes the Dawn instance (and whether Dawn prints): it counts as FA_BOUNDS_CHECKS=1 from here on,
// in the key below and in the child, which inherits this environment.
const beforeSeparator = process.argv.slice(2, process.argv.includes('--') ? process.argv.indexOf('--') : undefined);
if (beforeSeparator.includes('--bounds-checks')) process.env.FA_BOUNDS_CHECKS = '1';
const commandArgs = process.argv.slice(2).filter((arg, at) => !(at < beforeSeparator.length && arg === '--bounds-checks'));
if (wantsFilter(commandArgs, process.env)) {
  const key = quietKey(process.env);
  if (!knownQuiet(process.env, key)) {
    const { code, dropped, dawnLoaded } = await runFiltered();
    // Only a run that loaded Dawn can tell whether Dawn prints here.
    if (code === 0 && dawnLoaded) recordQuiet(process.env, dropped === 0, key);
    process.exit(code);
  }
}
// Kept out of this file's bundle on purpose (see tsup.config.ts): the parent above never loads it.
await import('./cli.js');
