/** The page's small Markdown renderer on what the rung pages use. */
import { describe, expect, it } from 'vitest';
import { markdownToHtml } from '../src/markdown.js';

describe('markdownToHtml', () => {
  it('renders headings, paragraphs, lists, code, tables and inline marks, escaping HTML', () => {
    const html = markdownToHtml(
      ['# Rung 5 — `fused`', '', 'Text with **bold**, *it*, a <tag> and', 'a second line.', '', '- one', '- two', '  continued',
        '', '```wgsl', 'let a = b < c;', '```', '', '| a | b |', '|---|---|', '| `x` | 2 |'].join('\n'),
    );
    expect(html).toContain('<h2>Rung 5 — <code>fused</code></h2>');
    expect(html).toContain('<p>Text with <strong>bold</strong>, <em>it</em>, a &lt;tag&gt; and a second line.</p>');
    expect(html).toContain('<ul><li>one</li><li>two continued</li></ul>');
    expect(html).toContain('<pre><code>let a = b &lt; c;</code></pre>');
    expect(html).toContain('<thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td><code>x</code></td><td>2</td></tr></tbody>');
  });

  it('links rung pages within the page and leaves other relative links as text', () => {
    const html = markdownToHtml('See [rung 6](06-fused-maxsmem.md#why), [the table](../ladder.md) and [Dawn](https://example.org/dawn).');
    expect(html).toContain('<a href="#rung=fused-maxsmem">rung 6</a>');
    expect(html).toContain('<span class="ref" title="../ladder.md">the table</span>');
    expect(html).toContain('<a href="https://example.org/dawn">Dawn</a>');
  });
});
