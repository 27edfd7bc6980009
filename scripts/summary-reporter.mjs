// A vitest reporter that ends the run with the skipped tests grouped by why they were skipped, and one plain line:
// "N passed, N failed, N skipped". A skip's reason is its note (`context.skip(note)`), else the "(skipped: …)" (or
// "(skipped without …)") its name or a describe block's name carries; a skip with neither is listed by name, to be
// given one.
import { relative } from 'node:path';

const MAX_NAMES = 4;

/**
 * Why `test` was skipped, or undefined when it does not say. "<rung> cannot run here: <why>" is grouped by <why> (the
 * test's name carries the rung).
 */
function reasonOf(test) {
  const note = test.result().note;
  if (note) return note.replace(/^\S+ (cannot run here: )/, '$1');
  const named = /\(skipped:? ([^)]*(?:\([^)]*\)[^)]*)*)\)/.exec(test.fullName);
  if (named) return named[1];
  if (test.options.mode === 'todo') return 'to do';
  return undefined;
}

export default class SummaryReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
    this.nameFilter = vitest.config.testNamePattern;
  }

  onTestRunEnd(testModules) {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    /** reason -> { files: Set, names: string[] } */
    const skips = new Map();
    const unexplained = [];
    for (const module of testModules) {
      const file = relative(this.root ?? process.cwd(), module.moduleId);
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else {
          counts.skipped++;
          const reason = reasonOf(test) ?? (this.nameFilter ? `not matched by the name filter ${this.nameFilter}` : undefined);
          if (reason === undefined) {
            unexplained.push(`${file} > ${test.fullName}`);
            continue;
          }
          const group = skips.get(reason) ?? { files: new Set(), names: [] };
          group.files.add(file);
          group.names.push(test.name);
          skips.set(reason, group);
        }
      }
    }
    const lines = [];
    if (counts.skipped > 0) {
      lines.push('', `Skipped, by reason:`);
      for (const [reason, { files, names }] of [...skips].sort((a, b) => b[1].names.length - a[1].names.length)) {
        const shown = names.slice(0, MAX_NAMES).join('; ') + (names.length > MAX_NAMES ? `; and ${names.length - MAX_NAMES} more` : '');
        lines.push(`  ${names.length} × ${reason}`, `      ${[...files].join(', ')}: ${shown}`);
      }
      if (unexplained.length > 0) {
        lines.push(`  ${unexplained.length} × no reason given (give one: context.skip(reason), or "(skipped: reason)" in the name):`);
        for (const name of unexplained) lines.push(`      ${name}`);
      }
    }
    process.stdout.write(`${lines.join('\n')}\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
