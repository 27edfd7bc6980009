#!/usr/bin/env node
// The packages as a consumer installs them: reads each installed package's README.md and package.json in a consumer
// project (CONSUMER/node_modules/NAME), and
// - writes each README example into CONSUMER/examples/ (fences ```ts example, ```js example, ```sh example), so that
//   the code a reader copies is the code CI runs, and the TypeScript settings the @fa/core README documents (its
//   ```json tsconfig fence) into CONSUMER/tsconfig.documented.json;
// - checks that every relative link of a README names a file inside the package (the tarball has no ../../docs), that
//   every `npm install` line names only packages that exist (the tarballs, or ALLOWED from the registry), and that
//   package.json carries no workspace: range and has license and engines, and the package a LICENSE file.
// Usage: node scripts/readme-examples.mjs CONSUMER NAME... ; prints the examples written, one a line (kind file).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, normalize, resolve, sep } from 'node:path';

/** Packages a README may tell the reader to install besides this workspace's: the peers and tools they use. */
const ALLOWED = new Set(['webgpu', 'typescript', '@types/node']);

const [consumer, ...names] = process.argv.slice(2);
if (!consumer || names.length === 0) {
  process.stderr.write('usage: node scripts/readme-examples.mjs CONSUMER NAME...\n');
  process.exit(2);
}
const problems = [];
const examples = [];
const examplesDir = resolve(consumer, 'examples');
mkdirSync(examplesDir, { recursive: true });

const slug = (name) => name.replace(/^@/, '').replace(/\//g, '-');

for (const name of names) {
  const root = resolve(consumer, 'node_modules', name);
  const readmePath = join(root, 'README.md');
  if (!existsSync(readmePath)) {
    problems.push(`${name}: no README.md in the package`);
    continue;
  }
  if (!existsSync(join(root, 'LICENSE'))) problems.push(`${name}: no LICENSE file in the package`);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [dep, range] of Object.entries(pkg[field] ?? {})) {
      if (String(range).startsWith('workspace:')) problems.push(`${name}: ${field} ${dep} is still "${range}" (packed with npm pack instead of pnpm pack?)`);
    }
  }
  if (!pkg.license) problems.push(`${name}: package.json has no license`);
  if (!pkg.engines?.node) problems.push(`${name}: package.json has no engines.node`);

  const readme = readFileSync(readmePath, 'utf8');
  // Fenced blocks: ```info ... ```
  const fence = /^```([^\n]*)\n([\s\S]*?)^```\s*$/gm;
  let count = 0;
  for (const match of readme.matchAll(fence)) {
    const [lang = '', tag] = match[1].trim().split(/\s+/);
    const body = match[2];
    if (tag === 'example') {
      const ext = { ts: 'ts', js: 'mjs', sh: 'sh' }[lang];
      if (!ext) {
        problems.push(`${name}: an example fence in language "${lang}" (give ts, js or sh)`);
        continue;
      }
      const file = join(examplesDir, `${slug(name)}-${++count}.${ext}`);
      writeFileSync(file, body);
      examples.push(`${lang} ${file}`);
    } else if (lang === 'json' && tag === 'tsconfig') {
      writeFileSync(join(consumer, 'tsconfig.documented.json'), body);
    }
    if (lang === 'sh') {
      for (const line of body.split('\n')) {
        const install = /^\s*npm install\s+([^#]*)/.exec(line);
        if (!install) continue;
        for (const spec of install[1].trim().split(/\s+/).filter((s) => !s.startsWith('-'))) {
          const dep = spec.replace(/(.)@[^/]*$/, '$1');
          if (!names.includes(dep) && !ALLOWED.has(dep)) problems.push(`${name}: README installs ${dep}, which is neither one of the packages nor a known dependency`);
        }
      }
    }
  }
  if (count === 0) problems.push(`${name}: README.md has no example (a fence tagged "example")`);

  // Links outside code: [text](target). Relative targets must stay inside the package and exist in it.
  const prose = readme.replace(fence, '');
  for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1];
    if (/^(https?:|mailto:|#)/.test(target)) continue;
    const path = normalize(join(root, decodeURIComponent(target.split('#')[0])));
    if (!path.startsWith(root + sep) && path !== root) problems.push(`${name}: README links to ${target}, outside the package`);
    else if (!existsSync(path)) problems.push(`${name}: README links to ${target}, which the package does not contain`);
  }
}

if (!existsSync(join(consumer, 'tsconfig.documented.json'))) problems.push('no README documents the TypeScript settings (a fence tagged "json tsconfig")');
if (problems.length > 0) {
  process.stderr.write(`${problems.map((p) => `readme-examples: ${p}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`${examples.join('\n')}\n`);
