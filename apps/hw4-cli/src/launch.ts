/**
 * hw4-cli entry. A command that may start the GPU runs as a child process behind the stderr filter
 * (stderr-filter.ts); this launcher decides that before loading anything else, so the parent process costs one Node
 * start and no more. Everything else runs main (cli.ts) in this process.
 */
import { runFiltered, wantsFilter } from './stderr-filter.js';

if (wantsFilter(process.argv.slice(2), process.env)) {
  process.exit(await runFiltered());
}
// Kept out of this file's bundle on purpose (see tsup.config.ts): the parent above never loads it.
await import('./cli.js');
