import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

interface DryTask {
  taskId: string;
  task: string;
  /** The package's folder, from the repository root. */
  directory: string;
  inputs: Record<string, string>;
}

describe('build cache', () => {
  it('hashes the shared build files of the repository root into every package\'s build, typecheck and lint', () => {
    const dry = execFileSync(`${root}node_modules/.bin/turbo`, ['run', 'build', 'typecheck', 'lint', '--dry=json'], { cwd: root, encoding: 'utf8' });
    const tasks = (JSON.parse(dry) as { tasks: DryTask[] }).tasks;
    const wanted: Record<string, string[]> = {
      build: ['tsup.shared.ts', 'tsconfig.base.json'],
      typecheck: ['tsconfig.base.json'],
      lint: ['eslint.config.mjs'],
    };
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) {
      // Inputs are named from the package's folder: packages/io and apps/web are two levels down, experiments one.
      const up = '../'.repeat(task.directory.split('/').length);
      for (const file of wanted[task.task] ?? []) expect(Object.keys(task.inputs), `${task.taskId} ${file}`).toContain(up + file);
    }
  });
});
