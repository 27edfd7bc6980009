/**
 * Where an output really goes, decided before anything is written:
 * - `-`: standard output, written as the data comes;
 * - an existing special file (a device, a FIFO, a socket, /dev/stdout): written directly, since renaming a temporary
 *   file over it would replace the device or pipe with a regular file;
 * - a symbolic link: followed to its target, as `cp` does, so the target is replaced and the link stays;
 * - an existing file with no write bit set: refused rather than replaced;
 * - anything else: a regular file, written through a temporary file beside it and renamed into place.
 */
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Hw4IoError } from './errors.js';
import { ioError } from './io-error.js';

/** The name that means standard input (for inputs) or standard output (for outputs). */
export const STDIO_PATH = '-';

export type OutputTarget =
  | { readonly kind: 'stdout' }
  | { readonly kind: 'special'; readonly path: string }
  | { readonly kind: 'file'; readonly path: string; readonly mode: number | undefined };

/** Resolves `path` (named `name` in messages) to where the bytes will go; throws a one-line Hw4IoError if it cannot. */
export async function resolveOutputTarget(path: string, name = path): Promise<OutputTarget> {
  if (path === STDIO_PATH) return { kind: 'stdout' };
  if (path.length > 1 && /[/\\]$/.test(path)) {
    throw new Hw4IoError(`output ${name}: ends with a slash, so it names a folder; give a file path (${path.replace(/[/\\]+$/, '')})`);
  }
  const absolute = resolve(path);
  const link = await lstat(absolute).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new Hw4IoError(`output ${name}: a folder on its path is a loop of symbolic links; fix or remove the looping link`);
    throw ioError(error, `output ${name}`);
  });
  if (link === undefined) return newFile(absolute, name);
  // stat follows links the way open() does (also the kernel's /proc/self/fd links, which realpath cannot resolve).
  const target = link.isSymbolicLink() ? await stat(absolute).catch((error: unknown) => brokenLink(error, absolute, name)) : link;
  if (target.isDirectory()) throw new Hw4IoError(`output ${name}: is a folder; give a file path`);
  if (!target.isFile()) return { kind: 'special', path: absolute };
  if (link.isSymbolicLink() && isSystemPath(absolute)) return { kind: 'special', path: absolute };
  // Renaming a finished file into place would replace even a file whose write bits are all off (the rename needs
  // only the folder's write permission): a file marked read-only is treated as one the user means to keep.
  if ((target.mode & 0o222) === 0) {
    throw new Hw4IoError(`output ${name}: is read-only (mode ${(target.mode & 0o777).toString(8)}); make it writable (chmod u+w) or choose another path`);
  }
  const real = link.isSymbolicLink() ? await realpath(absolute).catch((error: unknown) => { throw ioError(error, `output ${name}`); }) : absolute;
  return { kind: 'file', path: real, mode: target.mode & 0o777 };
}

/** Why a symbolic link cannot be followed, as a one-line Hw4IoError: its target is missing, or links lead in a loop. */
async function brokenLink(error: unknown, path: string, name: string): Promise<never> {
  const to = await readlink(path).catch(() => '?');
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      throw new Hw4IoError(`output ${name}: is a symbolic link to ${to}, which does not exist; create the target or remove the link`);
    case 'ELOOP':
      throw new Hw4IoError(`output ${name}: is a loop of symbolic links (it points to ${to}, and following the links never reaches a file); point the link at a file or remove it`);
    default:
      throw ioError(error, `output ${name}`);
  }
}

/** /dev/stdout, /dev/fd/N, /proc/self/fd/N: names of open descriptors, written directly even when they lead to a file. */
function isSystemPath(path: string): boolean {
  return path.startsWith('/dev/') || path.startsWith('/proc/');
}

async function newFile(absolute: string, name: string): Promise<OutputTarget> {
  const folder = dirname(absolute);
  const folderStat = await stat(folder).catch((error: unknown) => {
    throw (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? new Hw4IoError(`output ${name}: folder ${folder} does not exist; create it first`)
      : ioError(error, `output ${name}`);
  });
  if (!folderStat.isDirectory()) throw new Hw4IoError(`output ${name}: ${folder} is not a folder`);
  return { kind: 'file', path: absolute, mode: undefined };
}
