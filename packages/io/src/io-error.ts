import { Hw4IoError } from './errors.js';

/** Turns a Node file system error into a one-line Hw4IoError that says what to do. */
export function ioError(error: unknown, what: string): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const path = (error as NodeJS.ErrnoException | undefined)?.path;
  switch (code) {
    case 'ENOENT':
      return new Hw4IoError(`${what}: ${path ?? 'file'} does not exist; check the path`);
    case 'EACCES':
    case 'EPERM':
      return new Hw4IoError(`${what}: permission denied for ${path ?? 'the file'}`);
    case 'EISDIR':
      return new Hw4IoError(`${what}: ${path ?? 'the path'} is a directory; give a file path`);
    case 'ENOTDIR':
      return new Hw4IoError(`${what}: a part of ${path ?? 'the path'} is not a directory`);
    case 'ENOSPC':
      return new Hw4IoError(`${what}: no space left on the device`);
    case 'EFBIG':
      return new Hw4IoError(`${what}: the file would grow past the largest size allowed (ulimit -f, or the file system's limit); raise the limit or write elsewhere`);
    case 'EPIPE':
      return new Hw4IoError(`${what}: the reader closed the pipe before all the data was written`);
    default:
      return error instanceof Error ? new Hw4IoError(`${what}: ${error.message}`) : new Hw4IoError(`${what}: ${String(error)}`);
  }
}
