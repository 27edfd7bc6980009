/**
 * A scaling study's report: the time of each rung (and PyTorch's) at each value of one dimension of the shape, the
 * slope of log(time) over log(value) fitted per segment (@fa/ladder's scaling-chart.ts), a markdown table and the
 * log-log SVG chart.
 */
import type { Shape } from '@fa/io/node';
import { scalingSvg, segmentSlopes, type SweepSeries } from '@fa/ladder';
import type { BenchShape } from './report.js';

export { fitSlope, segmentSlopes, type SweepSeries, type SweepSlope } from '@fa/ladder';

/** The dimension a study varies: N (sequence length), B (batch) or d (head size). */
export type SweepStudy = 'n' | 'batch' | 'd';

export interface SweepReport {
  date: string;
  adapter: string;
  command: string;
  study: SweepStudy;
  /** The fixed dimensions (the swept one is 0). */
  base: Shape;
  values: number[];
  shapes: BenchShape[];
}

const AXIS_NAME: Record<SweepStudy, string> = { n: 'N', batch: 'B', d: 'd' };

/** The shape of a study at one value. */
export function sweepShape(study: SweepStudy, base: Shape, value: number): Shape {
  return study === 'n' ? { ...base, N: value } : study === 'batch' ? { ...base, B: value } : { ...base, d: value };
}

/** The series of a report: each rung that ran at some value, in ladder order, then PyTorch fp32. */
export function seriesOf(report: SweepReport): SweepSeries[] {
  const ids: string[] = [];
  for (const s of report.shapes) for (const c of [...s.cells].sort((a, b) => a.index - b.index)) if (c.ran && c.ms !== undefined && !ids.includes(c.id)) ids.push(c.id);
  const series: SweepSeries[] = ids.map((id) => ({
    id,
    points: report.shapes.flatMap((s, k) => {
      const cell = s.cells.find((c) => c.id === id && c.ran && c.ms !== undefined);
      return cell?.ms !== undefined ? [[report.values[k] as number, cell.ms] as [number, number]] : [];
    }),
  }));
  const torch = report.shapes.flatMap((s, k) => (s.torch && 'ms' in s.torch ? [[report.values[k] as number, s.torch.ms] as [number, number]] : []));
  if (torch.length > 0) series.push({ id: 'PyTorch fp32', points: torch });
  return series;
}

const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

/** The markdown: the study's parameters, ms per value and series, then the fitted slopes. */
export function sweepMarkdown(report: SweepReport): string {
  const axis = AXIS_NAME[report.study];
  const series = seriesOf(report);
  const fixed = (['B', 'N', 'd'] as const).filter((k) => k !== axis).map((k) => `${k} = ${report.base[k]}`).join(', ');
  const lines = [
    `## Scaling with ${axis} (${fixed})`,
    '',
    `${report.adapter}, ${report.date}. \`${report.command}\`. Time per call (ms, median) as the bench measures it: steady-state kernel time for GPU rungs, whole runs for CPU rungs; each rung's output was checked against the float64 oracle on sampled rows first (a cell that failed is left out).`,
    '',
    `| ${axis} | ${series.map((s) => s.id).join(' | ')} |`,
    `|---|${series.map(() => '---').join('|')}|`,
    ...report.values.map((v) => `| ${v} | ${series.map((s) => { const p = s.points.find(([x]) => x === v); return p ? ms(p[1]) : '—'; }).join(' | ')} |`),
    '',
    `Slopes of log(time) over log(${axis}), least squares over the lower and upper half of the values (1: linear, 2: quadratic):`,
    '',
    '| series | slopes |',
    '|---|---|',
    ...series.map((s) => `| ${s.id} | ${segmentSlopes(s.points).map((g) => `${g.slope.toFixed(2)} (${axis} ${g.from}-${g.to})`).join(', ') || '—'} |`),
    '',
  ];
  return lines.join('\n');
}


/** The log-log chart of a report. */
export function sweepSvg(report: SweepReport): string {
  const axis = AXIS_NAME[report.study];
  return scalingSvg(`Time per call over ${axis}, log-log (${report.adapter})`, axis, report.values, seriesOf(report));
}
