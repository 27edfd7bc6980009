/**
 * The folder a bench or sweep writes its report into (--out), checked before anything is measured: a measurement
 * may take an hour, and a report that cannot be written at its end is an hour lost. Each problem is one line naming
 * the path and the fix, exit 4 (file system). Nothing is created here: the folder is made when the report is written.
 */
import { accessSync, constants, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ioError } from '@fa/io/node';
import { EXIT, ExitError, UsageError } from '../exit-codes.js';

/** The file name of a bench report: the adapter's vendor and device. */
export function reportSlug(adapter: string): string {
  return adapter.split(' / ').slice(0, 2).join('-').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'unknown';
}

/** The extensions of a report's three files: data, tables, chart. */
export const REPORT_EXTENSIONS = ['json', 'md', 'svg'] as const;

const fail = (dir: string, problem: string): ExitError => new ExitError(`--out ${dir}: ${problem}`, EXIT.fileSystem);

/** What a path that is not a folder is, for messages. */
function kindOf(stats: Stats): string {
  if (stats.isFile()) return 'a file';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  return 'not a folder';
}

/** The stats of `path` with links followed, undefined where nothing is there; a broken or looping link is an error. */
function statOf(dir: string, path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw fail(dir, `${path} is a loop of symbolic links; fix or remove the looping link`);
    if (code === 'ENOTDIR') return undefined; // a part of the path is a file: found when the path is walked up
    if (code !== 'ENOENT') throw ioError(error, `--out ${dir}`);
    const link = lstatOrUndefined(path);
    if (link?.isSymbolicLink() === true) {
      throw fail(dir, `${path} is a symbolic link to ${readlinkSync(path)}, which does not exist; create the target or remove the link`);
    }
    return undefined;
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Throws unless this process may create files in folder `path`. */
function checkWritable(dir: string, path: string): void {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') throw fail(dir, `${path} is on a read-only file system; give --out a folder on a writable one`);
    if (code === 'EACCES' || code === 'EPERM') throw fail(dir, `${path} is not writable by this user; make it writable (chmod u+w) or give another --out`);
    throw ioError(error, `--out ${dir}`);
  }
}

/**
 * Checks that the report folder `dir` can take files: an existing folder this process may write in, or a path whose
 * nearest existing folder it may write in (the rest is created when the report is written).
 */
export function checkReportFolder(dir: string): void {
  if (dir.length === 0) throw new UsageError('--out is empty; give the folder for the report files, e.g. --out docs/bench');
  const absolute = resolve(dir);
  const here = statOf(dir, absolute);
  if (here !== undefined) {
    if (!here.isDirectory()) throw fail(dir, `is ${kindOf(here)}, not a folder; give a folder for the report files (it is created if missing)`);
    checkWritable(dir, absolute);
    return;
  }
  // Missing: the nearest existing folder above it must be a folder this process may write in.
  let above = dirname(absolute);
  for (;;) {
    const stats = statOf(dir, above);
    if (stats !== undefined) {
      if (!stats.isDirectory()) throw fail(dir, `${above} is ${kindOf(stats)}, not a folder, so the folder cannot be created; give another --out`);
      checkWritable(dir, above);
      return;
    }
    const next = dirname(above);
    if (next === above) return;
    above = next;
  }
}

/**
 * Checks the report files `<base>.json`, `.md` and `.svg` (base = folder/name): each absent, or a file this run may
 * replace (not a folder, not marked read-only, not a broken link), as the atomic writer will require.
 */
export function checkReportFiles(dir: string, base: string): void {
  for (const extension of REPORT_EXTENSIONS) {
    const path = `${base}.${extension}`;
    const stats = statOf(dir, path);
    if (stats === undefined) continue;
    if (stats.isDirectory()) throw fail(dir, `${path} is a folder where the report's ${extension} file goes; move it away or give another --out`);
    if (stats.isFile() && (stats.mode & 0o222) === 0) {
      throw fail(dir, `${path} is read-only (mode ${(stats.mode & 0o777).toString(8)}); make it writable (chmod u+w) or give another --out`);
    }
  }
}

/**
 * Reads an earlier report at `path` (undefined where there is none), checked by `valid` (a reason it is not one, or
 * undefined): a file that is not such a report is never replaced or used silently, it stops the run (exit 4) with its
 * name, what is wrong with it, and `fix`.
 */
export function readEarlierReport(dir: string, path: string, what: string, valid: (value: unknown) => string | undefined, fix: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(error, `--out ${dir}`);
  }
  let value: unknown;
  let why: string | undefined;
  try {
    value = JSON.parse(text);
    why = valid(value);
  } catch (error) {
    why = `not JSON: ${(error as Error).message.split('\n')[0] ?? ''}`;
  }
  if (why !== undefined) {
    throw fail(dir, `${path} is not ${what} (${why}); ${fix}`);
  }
  return value;
}

/** Creates the report folder (after measuring), with a file system failure as a one-line error. */
export function makeReportFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw ioError(error, `--out ${dir}`);
  }
}
