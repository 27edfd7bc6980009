/**
 * The teaching page: reads the address (`?shape=B,N,d&kind=&impl=&autorun=1`), finds the reader's GPU, runs the
 * ladder and draws the table, the chart and the selected rung. When a run ends, `window.ladderResult` holds one
 * `{ id, status, maxAbsError, ms, reason? }` per rung, for test harnesses.
 */
import { adapterName, type RunEnv } from '@fa/core';
import { DATA_KINDS, formatShape, validateShape, type DataKind } from '@fa/io';
import { LADDER } from '@fa/ladder/browser';
import { drawChart } from './chart.js';
import { drawDetails } from './details.js';
import { browserEnv } from './gpu.js';
import { readParams } from './params.js';
import { rungMs, runLadder, type RungRow } from './run-ladder.js';
import { drawTable } from './table.js';
import { ComputeWorker } from './worker-client.js';

export interface LadderResultEntry {
  id: string;
  status: 'pass' | 'fail' | 'skipped';
  maxAbsError: number | null;
  ms: number | null;
  reason?: string;
}

declare global {
  interface Window {
    ladderResult?: LadderResultEntry[];
    ladderError?: string;
  }
}

const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
const form = byId('controls') as HTMLFormElement;
const input = (name: string): HTMLInputElement => form.elements.namedItem(name) as HTMLInputElement;
const choice = (name: string): HTMLSelectElement => form.elements.namedItem(name) as HTMLSelectElement;
const note = byId('note') as HTMLParagraphElement;
const adapterLine = byId('adapter') as HTMLParagraphElement;
const tableBody = (byId('results') as HTMLTableElement).tBodies[0] as HTMLTableSectionElement;
const chart = document.getElementById('chart') as unknown as SVGSVGElement;
const details = byId('details');

const params = readParams(location.search);
let selected: string = params.impl[0] ?? LADDER.find((r) => r.kind === 'gpu')?.id ?? LADDER[0]?.id ?? '';
let lastRows: readonly RungRow[] = LADDER.map((rung) => ({ rung, status: 'waiting' }));

function select(id: string): void {
  const rung = LADDER.find((r) => r.id === id);
  if (!rung) return;
  selected = id;
  drawDetails(details, rung, LADDER);
  drawTable(tableBody, lastRows, selected, select);
}

function fillControls(): void {
  input('B').value = String(params.shape.B);
  input('N').value = String(params.shape.N);
  input('d').value = String(params.shape.d);
  const kind = choice('kind');
  kind.replaceChildren(...DATA_KINDS.map((k) => new Option(k, k, k === params.kind, k === params.kind)));
  const impl = choice('impl');
  const single = params.impl.length === 1 ? params.impl[0] : undefined;
  impl.replaceChildren(new Option('the whole ladder', ''), ...LADDER.map((r) => new Option(`${r.index} ${r.id}`, r.id, false, r.id === single)));
}

function toResult(rows: readonly RungRow[]): LadderResultEntry[] {
  return rows.map((row) => {
    const entry: LadderResultEntry = {
      id: row.rung.id,
      status: row.status === 'pass' || row.status === 'skipped' ? row.status : 'fail',
      maxAbsError: row.comparison?.maxAbsError ?? null,
      ms: rungMs(row) ?? null,
    };
    if (row.reason !== undefined) entry.reason = row.reason;
    else if (row.status !== 'pass' && row.status !== 'skipped') entry.reason = `the run ended with the rung ${row.status}`;
    return entry;
  });
}

async function start(env: RunEnv, worker: ComputeWorker, ids: readonly string[]): Promise<void> {
  const button = byId('run') as HTMLButtonElement;
  button.disabled = true;
  delete window.ladderResult;
  try {
    const shape = validateShape({ B: Number(input('B').value), N: Number(input('N').value), d: Number(input('d').value) });
    const kind = choice('kind').value as DataKind;
    const unknown = ids.filter((id) => !LADDER.some((r) => r.id === id));
    if (unknown.length > 0) throw new Error(`unknown rung ${unknown.join(', ')}`);
    const rungs = ids.length === 0 ? LADDER : LADDER.filter((r) => ids.includes(r.id));
    const rows = await runLadder({
      shape,
      kind,
      seed: params.seed,
      rungs,
      env,
      worker,
      onUpdate: (current) => {
        lastRows = current;
        drawTable(tableBody, current, selected, select);
        drawChart(chart, current);
      },
      onNote: (text) => {
        note.textContent = `${formatShape(shape)}, ${kind} data: ${text}`;
      },
    });
    window.ladderResult = toResult(rows);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    note.textContent = `The run stopped: ${message}`;
    window.ladderError = message;
    window.ladderResult = [];
  } finally {
    button.disabled = false;
  }
}

async function boot(): Promise<void> {
  fillControls();
  drawTable(tableBody, lastRows, selected, select);
  drawChart(chart, lastRows);
  select(selected);
  window.addEventListener('hashchange', () => {
    const id = /rung=([a-z0-9-]+)/.exec(location.hash)?.[1];
    if (id) select(id);
  });
  if (params.problems.length > 0) note.textContent = `In the address: ${params.problems.join('; ')}`;
  const env = await describeGpu();
  const worker = new ComputeWorker();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = choice('impl').value;
    void start(env, worker, id === '' ? [] : [id]);
  });
  if (params.autorun) await start(env, worker, params.impl);
}

async function describeGpu(): Promise<RunEnv> {
  const env = await browserEnv();
  const gpu = env.gpu?.report;
  adapterLine.textContent = gpu
    ? `GPU: ${adapterName(gpu)}${gpu.isFallbackAdapter ? ' (a software adapter: slower than a real GPU)' : ''}; features: ${gpu.features.join(', ') || 'none'}; timing: ${env.gpu.hasTimestamps ? 'GPU timestamps' : 'wall clock'}`
    : `No GPU: ${env.gpuUnavailableReason ?? 'unknown reason'}. The CPU rungs still run.`;
  return env;
}

void boot();
