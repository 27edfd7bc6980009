/**
 * Remembering that Dawn is quiet on this machine, so the stderr filter (a second process, about 0.13 s of every run on
 * the H100 host) is needed only where Dawn actually writes to stderr. After a filtered run that succeeded, the
 * launcher records whether Dawn printed anything, under a key made of what decides that: the Node version, the Dawn
 * binary, the Vulkan loader's drivers (the ICD manifest folders and the VK_* variables), the host and the Dawn
 * toggles the run asks for (FA_BOUNDS_CHECKS). A later run with
 * the same key and a "quiet" record runs in one process. Any change of driver, Dawn or variables gives a new key, so
 * the filter runs again first. The record lives in hw4-cli's own cache folder ($XDG_CACHE_HOME/hw4-cli, else
 * ~/.cache/hw4-cli); FA_STDERR_FILTER=always ignores it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, hostname } from 'node:os';
import { dirname, join } from 'node:path';

/** Where the Vulkan loader looks for driver manifests (ICDs) besides the folders named by variables. */
const ICD_FOLDERS = ['/etc/vulkan/icd.d', '/usr/share/vulkan/icd.d', '/usr/local/share/vulkan/icd.d'];

function describePath(path: string): string {
  try {
    const s = statSync(path);
    if (!s.isDirectory()) return `${path}:${s.size}:${s.mtimeMs}`;
    return `${path}:[${readdirSync(path)
      .sort()
      .map((name) => describePath(join(path, name)))
      .join(',')}]`;
  } catch {
    return `${path}:-`;
  }
}

/** The Dawn binary the CLI would load (webgpu's dist folder), or undefined when it cannot be found. */
function dawnFolder(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('webgpu')), 'dist');
  } catch {
    return undefined;
  }
}

/** A key for everything that decides whether Dawn prints here. */
export function quietKey(env: NodeJS.ProcessEnv): string {
  const dataDirs = (env.XDG_DATA_DIRS ?? '').split(':').filter((d) => d !== '');
  const home = env.HOME ?? homedir();
  const folders = [...ICD_FOLDERS, ...dataDirs.map((d) => join(d, 'vulkan/icd.d')), join(home, '.local/share/vulkan/icd.d')];
  const variables = Object.keys(env)
    .filter((name) => name.startsWith('VK_') || name === 'LD_LIBRARY_PATH' || name === '__EGL_VENDOR_LIBRARY_FILENAMES' || name === 'FA_BOUNDS_CHECKS')
    .sort()
    .map((name) => `${name}=${env[name] ?? ''}`);
  const dawn = dawnFolder();
  const facts = [process.version, hostname(), dawn === undefined ? 'no-dawn' : describePath(dawn), ...folders.map(describePath), ...variables];
  return createHash('sha256').update(facts.join('\n')).digest('hex').slice(0, 32);
}

export function cacheFolder(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME ?? join(env.HOME ?? homedir(), '.cache'), 'hw4-cli');
}

function recordPath(env: NodeJS.ProcessEnv, key: string): string {
  return join(cacheFolder(env), `dawn-stderr-${key}.json`);
}

/** Whether a filtered run on this machine, with this key, found Dawn quiet. */
export function knownQuiet(env: NodeJS.ProcessEnv, key = quietKey(env)): boolean {
  if (env.FA_STDERR_FILTER === 'always') return false;
  try {
    return (JSON.parse(readFileSync(recordPath(env, key), 'utf8')) as { quiet?: unknown }).quiet === true;
  } catch {
    return false;
  }
}

/** Records what a successful filtered run saw; a cache that cannot be written is skipped without a word. */
export function recordQuiet(env: NodeJS.ProcessEnv, quiet: boolean, key = quietKey(env)): void {
  try {
    const folder = cacheFolder(env);
    mkdirSync(folder, { recursive: true });
    const path = recordPath(env, key);
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ quiet, recorded: new Date().toISOString() })}\n`);
    renameSync(temporary, path);
  } catch {
    // The cache is an optimization: without it every run is filtered.
  }
}
