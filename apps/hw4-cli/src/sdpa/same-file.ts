/**
 * Refusing an OUTPUT or --lse that would overwrite an input (Q, K, V, the mask), or --lse that is OUTPUT, before
 * anything is read or computed (exit 4). Files are compared as the system knows them, by device and inode, so a path
 * through `../`, a symbolic link or a hard link is caught as well as the same name; two outputs that do not exist yet
 * are compared by their folder's real path and their name.
 */
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Hw4IoError, STDIO_PATH } from '@fa/io/node';

/** A file of the command line and how messages call it: `Q`, `the mask`, `OUTPUT`, `--lse`. */
export interface NamedPath {
  readonly role: string;
  readonly path: string;
}

/** The file's identity: device and inode where it exists, else (for an output) where it would be created. */
async function identity(path: string, output: boolean): Promise<string | undefined> {
  if (path === STDIO_PATH) return undefined;
  const found = await stat(path).catch(() => undefined);
  if (found) return `${found.dev}:${found.ino}`;
  if (!output) return undefined;
  const folder = await realpath(dirname(resolve(path))).catch(() => dirname(resolve(path)));
  return `new:${join(folder, basename(path))}`;
}

export async function refuseOverlaps(inputs: readonly NamedPath[], outputs: readonly NamedPath[]): Promise<void> {
  const inputIds = await Promise.all(inputs.map(async (input) => ({ ...input, id: await identity(input.path, false) })));
  const outputIds = await Promise.all(outputs.map(async (output) => ({ ...output, id: await identity(output.path, true) })));
  for (const [n, output] of outputIds.entries()) {
    if (output.id === undefined) continue;
    const input = inputIds.find((i) => i.id !== undefined && i.id === output.id);
    if (input) {
      const same = input.path === output.path ? '' : ` (${input.path})`;
      throw new Hw4IoError(`${output.role} ${output.path} is the input file ${input.role}${same} itself; writing it would destroy the input, choose another path`);
    }
    const earlier = outputIds.slice(0, n).find((o) => o.id === output.id);
    if (earlier) {
      throw new Hw4IoError(`${output.role} ${output.path} is ${earlier.role} ${earlier.path} itself; one would replace the other, choose another path`);
    }
  }
}
