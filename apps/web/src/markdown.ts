/**
 * Just enough Markdown for the rung pages: headings, paragraphs, lists, fenced code, tables, and inline code,
 * bold, italics and links. Everything is escaped first; a link to another rung's page becomes a link within the page.
 */
const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** `#rung=ID` for a link to a rung page (`06-fused-maxsmem.md`), the address for web links, undefined otherwise. */
function linkTarget(href: string): string | undefined {
  const rung = /(?:^|\/)\d{2}-([a-z0-9-]+)\.md(?:#.*)?$/.exec(href);
  if (rung) return `#rung=${rung[1] ?? ''}`;
  return /^https?:\/\//.test(href) ? href : undefined;
}

export function inline(text: string): string {
  const codes: string[] = [];
  // Code spans are set aside behind placeholders (a control character never found in the pages) while the rest is marked up.
  const mark = String.fromCharCode(1);
  let html = escapeHtml(text).replace(/`([^`]+)`/g, (_, code: string) => `${mark}${codes.push(code) - 1}${mark}`);
  html = html
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) => {
      const target = linkTarget(href.replace(/&amp;/g, '&'));
      return target ? `<a href="${target}">${label}</a>` : `<span class="ref" title="${href}">${label}</span>`;
    })
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w*])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_([^_\s][^_]*)_(?!\w)/g, '$1<em>$2</em>');
  return html.replace(new RegExp(`${mark}(\\d+)${mark}`, 'g'), (_, k: string) => `<code>${codes[Number(k)] ?? ''}</code>`);
}

const cells = (line: string): string[] => line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
const isListItem = (line: string): boolean => /^\s*([-*]|\d+\.)\s+/.test(line);

export function markdownToHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === '') {
      i++;
    } else if (line.startsWith('```')) {
      const code: string[] = [];
      for (i++; i < lines.length && !(lines[i] as string).startsWith('```'); i++) code.push(lines[i] as string);
      i++;
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
    } else if (/^#{1,6}\s/.test(line)) {
      const level = /^#+/.exec(line)?.[0].length ?? 1;
      out.push(`<h${level + 1}>${inline(line.slice(level).trim())}</h${level + 1}>`);
      i++;
    } else if (line.trim().startsWith('|') && /^\s*\|?[\s:|-]+\|?\s*$/.test(lines[i + 1] ?? '')) {
      const head = cells(line);
      const body: string[][] = [];
      for (i += 2; i < lines.length && (lines[i] as string).trim().startsWith('|'); i++) body.push(cells(lines[i] as string));
      const row = (tag: string, values: string[]) => `<tr>${values.map((v) => `<${tag}>${inline(v)}</${tag}>`).join('')}</tr>`;
      out.push(`<table><thead>${row('th', head)}</thead><tbody>${body.map((r) => row('td', r)).join('')}</tbody></table>`);
    } else if (isListItem(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items: string[] = [];
      for (; i < lines.length && (lines[i] as string).trim() !== ''; i++) {
        const current = lines[i] as string;
        if (isListItem(current)) items.push(current.replace(/^\s*([-*]|\d+\.)\s+/, ''));
        else items.push(`${items.pop() ?? ''} ${current.trim()}`);
      }
      const tag = ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${items.map((item) => `<li>${inline(item)}</li>`).join('')}</${tag}>`);
    } else {
      const paragraph: string[] = [];
      for (; i < lines.length; i++) {
        const current = lines[i] as string;
        if (current.trim() === '' || current.startsWith('```') || /^#{1,6}\s/.test(current) || isListItem(current) || current.trim().startsWith('|')) break;
        paragraph.push(current.trim());
      }
      out.push(`<p>${inline(paragraph.join(' '))}</p>`);
    }
  }
  return out.join('\n');
}
