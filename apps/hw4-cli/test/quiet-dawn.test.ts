import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { knownQuiet, quietKey, recordQuiet } from '../src/quiet-dawn.js';
import { isNativeLine } from '../src/stderr-filter.js';
import { cli, tempFolder } from './cli-helpers.js';

describe('remembering whether Dawn is quiet here', () => {
  it('keys the record on the drivers and variables that decide it', () => {
    const env = { HOME: '/home/someone', PATH: '/usr/bin' };
    expect(quietKey(env)).toBe(quietKey({ ...env }));
    expect(quietKey({ ...env, VK_ICD_FILENAMES: '/x/icd.json' })).not.toBe(quietKey(env));
    expect(quietKey({ ...env, LD_LIBRARY_PATH: '/opt/lib' })).not.toBe(quietKey(env));
    expect(quietKey({ ...env, UNRELATED: '1' })).toBe(quietKey(env));
  });

  it('reads back what was recorded, and nothing for another key or with FA_STDERR_FILTER=always', () => {
    const env = { XDG_CACHE_HOME: tempFolder() };
    expect(knownQuiet(env)).toBe(false);
    recordQuiet(env, true);
    expect(knownQuiet(env)).toBe(true);
    expect(knownQuiet({ ...env, FA_STDERR_FILTER: 'always' })).toBe(false);
    expect(knownQuiet({ ...env, VK_ICD_FILENAMES: '/x/icd.json' })).toBe(false);
    recordQuiet(env, false);
    expect(knownQuiet(env)).toBe(false);
  });

  it('records a filtered run that saw Dawn print as not quiet, and keeps filtering', () => {
    const cache = tempFolder();
    for (let k = 0; k < 2; k++) {
      const run = cli(['--list'], { XDG_CACHE_HOME: cache, VK_ICD_FILENAMES: '/nonexistent/icd.json' });
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
    }
    const records = readdirSync(join(cache, 'hw4-cli'));
    expect(records).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(cache, 'hw4-cli', records[0] as string), 'utf8'))).toMatchObject({ quiet: false });
  });

  it('runs in one process where Dawn was found quiet (so a line Dawn prints after all reaches stderr)', () => {
    const cache = tempFolder();
    const env = { ...process.env, XDG_CACHE_HOME: cache, VK_ICD_FILENAMES: '/nonexistent/icd.json' };
    recordQuiet(env, true, quietKey(env));
    const unfiltered = cli(['--list'], { XDG_CACHE_HOME: cache, VK_ICD_FILENAMES: '/nonexistent/icd.json' });
    expect(unfiltered.code).toBe(0);
    expect(unfiltered.stderr.split('\n').some(isNativeLine)).toBe(true);
    const always = cli(['--list'], { XDG_CACHE_HOME: cache, VK_ICD_FILENAMES: '/nonexistent/icd.json', FA_STDERR_FILTER: 'always' });
    expect(always.stderr).toBe('');
  });
});
