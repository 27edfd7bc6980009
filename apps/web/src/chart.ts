/**
 * The ladder as it climbs: one horizontal bar per rung that ran, its length GFLOP/s on a log scale (the rungs span
 * three orders of magnitude), drawn as plain SVG and redrawn as each rung finishes.
 */
import type { RungRow } from './run-ladder.js';

const SVG = 'http://www.w3.org/2000/svg';
const BAR = 18;
const GAP = 6;
const LABEL = 150;
const WIDTH = 640;

function element<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

export function drawChart(svg: SVGSVGElement, rows: readonly RungRow[]): void {
  const ran = rows.filter((r) => r.gflops !== undefined && r.gflops > 0);
  svg.replaceChildren();
  const height = Math.max(1, ran.length) * (BAR + GAP) + 30;
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${height}`);
  svg.setAttribute('height', String(height));
  if (ran.length === 0) {
    svg.append(element('text', { x: 0, y: 20, class: 'chart-note' }, 'GFLOP/s of each rung appears here as it finishes.'));
    return;
  }
  const values = ran.map((r) => r.gflops as number);
  const low = Math.floor(Math.log10(Math.min(...values)));
  const high = Math.max(low + 1, Math.ceil(Math.log10(Math.max(...values))));
  const span = WIDTH - LABEL - 70;
  const x = (v: number) => LABEL + ((Math.log10(v) - low) / (high - low)) * span;
  for (let p = low; p <= high; p++) {
    svg.append(element('line', { x1: x(10 ** p), x2: x(10 ** p), y1: 0, y2: height - 22, class: 'chart-grid' }));
    svg.append(element('text', { x: x(10 ** p), y: height - 6, class: 'chart-axis', 'text-anchor': 'middle' }, `${10 ** p >= 1 ? 10 ** p : (10 ** p).toPrecision(1)}`));
  }
  ran.forEach((row, k) => {
    const y = k * (BAR + GAP);
    const value = row.gflops as number;
    svg.append(element('text', { x: LABEL - 6, y: y + BAR - 5, class: 'chart-label', 'text-anchor': 'end' }, `${row.rung.index} ${row.rung.id}`));
    svg.append(element('rect', { x: LABEL, y, width: Math.max(2, x(value) - LABEL), height: BAR, class: `chart-bar ${row.rung.kind} ${row.status}` }));
    svg.append(element('text', { x: x(value) + 4, y: y + BAR - 5, class: 'chart-value' }, value < 10 ? value.toFixed(2) : value.toFixed(0)));
  });
  svg.append(element('text', { x: WIDTH - 4, y: height - 6, class: 'chart-axis', 'text-anchor': 'end' }, 'GFLOP/s'));
}
