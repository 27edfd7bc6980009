/** Each rung's page from docs/rungs (`NN-id.md`), bundled into the page as text. */
const pages = import.meta.glob<string>('../../../docs/rungs/*.md', { query: '?raw', import: 'default', eager: true });

const byId = new Map<string, string>();
for (const [path, text] of Object.entries(pages)) {
  const id = /\/\d+-([a-z0-9-]+)\.md$/.exec(path)?.[1];
  if (id) byId.set(id, text);
}

/** The Markdown of a rung's page, or undefined when it has none. */
export function rungDoc(id: string): string | undefined {
  return byId.get(id);
}
