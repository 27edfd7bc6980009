/**
 * The scaling studies' chart and slopes, for the CLI's `sweep` and the teaching page: the least-squares slope of
 * log(time) over log(value) per half of the values, and a log-log SVG chart with one line per series. The chart has
 * its own white background, like the bench chart, so it reads the same on light and dark pages.
 */

/** One line of the chart: a rung, or PyTorch. */
export interface SweepSeries {
  id: string;
  /** [value, milliseconds] where it ran. */
  points: [number, number][];
}

/** A fitted slope of log(ms) over log(value) between two values. */
export interface SweepSlope {
  from: number;
  to: number;
  slope: number;
}

/** The least-squares slope of log(ms) over log(value); undefined for fewer than two points. */
export function fitSlope(points: readonly (readonly [number, number])[]): number | undefined {
  if (points.length < 2) return undefined;
  const xs = points.map(([x]) => Math.log(x));
  const ys = points.map(([, y]) => Math.log(y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, k) => {
    num += (x - mx) * ((ys[k] as number) - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? undefined : num / den;
}

/**
 * Slopes over the lower and the upper half of a series' points (the halves share the middle point), so a curve that
 * starts flat and turns quadratic shows both.
 */
export function segmentSlopes(points: readonly (readonly [number, number])[]): SweepSlope[] {
  if (points.length < 2) return [];
  const halves = points.length < 4 ? [points] : [points.slice(0, Math.ceil(points.length / 2)), points.slice(Math.floor(points.length / 2))];
  return halves.flatMap((half) => {
    const slope = fitSlope(half);
    return slope === undefined ? [] : [{ from: (half[0] as [number, number])[0], to: (half[half.length - 1] as [number, number])[0], slope }];
  });
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
const TORCH = '#d62728';
const TEXT = '#222222';
const GRID = '#dddddd';

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Powers of ten covering [lo, hi]. */
function decades(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
}

/** The log-log chart of time over `values` (named `axis`): one line per series with its points, the slopes in the legend. */
export function scalingSvg(title: string, axis: string, values: readonly number[], series: readonly SweepSeries[]): string {
  const width = 760;
  const height = 440;
  const left = 70;
  const right = 250;
  const top = 40;
  const bottom = 50;
  const all = series.flatMap((s) => s.points);
  const xs = values;
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const ys = all.map(([, y]) => y);
  const [yMin, yMax] = ys.length > 0 ? [Math.min(...ys), Math.max(...ys)] : [1, 10];
  const yLo = 10 ** Math.floor(Math.log10(yMin));
  const yHi = 10 ** Math.ceil(Math.log10(yMax));
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const xAt = (x: number): number => left + (xMax === xMin ? plotW / 2 : ((Math.log(x) - Math.log(xMin)) / (Math.log(xMax) - Math.log(xMin))) * plotW);
  const yAt = (y: number): number => top + plotH - ((Math.log(y) - Math.log(yLo)) / (Math.log(yHi) - Math.log(yLo) || 1)) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="22" fill="${TEXT}" font-size="14">${escape(title)}</text>`,
  ];
  for (const y of decades(yLo, yHi)) {
    if (y < yLo || y > yHi) continue;
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${yAt(y).toFixed(1)}" y2="${yAt(y).toFixed(1)}" stroke="${GRID}"/>`);
    parts.push(`<text x="${left - 6}" y="${(yAt(y) + 4).toFixed(1)}" fill="${TEXT}" text-anchor="end">${y >= 1 ? y.toFixed(0) : y.toPrecision(1)} ms</text>`);
  }
  let lastLabel = Number.NEGATIVE_INFINITY;
  for (const x of xs) {
    parts.push(`<line x1="${xAt(x).toFixed(1)}" x2="${xAt(x).toFixed(1)}" y1="${top}" y2="${top + plotH}" stroke="${GRID}"/>`);
    if (xAt(x) - lastLabel < 30) continue; // a value too close to the last labelled one (1000 beside 1024) keeps its line only
    lastLabel = xAt(x);
    parts.push(`<text x="${xAt(x).toFixed(1)}" y="${top + plotH + 16}" fill="${TEXT}" text-anchor="middle" font-size="10">${x}</text>`);
  }
  parts.push(`<text x="${left + plotW / 2}" y="${height - 10}" fill="${TEXT}" text-anchor="middle">${axis}</text>`);
  series.forEach((s, k) => {
    const color = s.id === 'PyTorch fp32' ? TORCH : (PALETTE[k % PALETTE.length] as string);
    const dash = s.id === 'PyTorch fp32' ? ' stroke-dasharray="6 4"' : '';
    const path = s.points.map(([x, y]) => `${xAt(x).toFixed(1)},${yAt(y).toFixed(1)}`).join(' ');
    parts.push(`<polyline data-series="${escape(s.id)}" points="${path}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
    for (const [x, y] of s.points) parts.push(`<circle cx="${xAt(x).toFixed(1)}" cy="${yAt(y).toFixed(1)}" r="3" fill="${color}"/>`);
    const slopes = segmentSlopes(s.points).map((g) => g.slope.toFixed(2)).join(' → ');
    const ly = top + 10 + k * 34;
    parts.push(`<line x1="${width - right + 16}" x2="${width - right + 40}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${width - right + 46}" y="${ly + 4}" fill="${TEXT}">${escape(s.id)}</text>`);
    if (slopes) parts.push(`<text x="${width - right + 46}" y="${ly + 18}" fill="${TEXT}" font-size="10">slope ${slopes}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
