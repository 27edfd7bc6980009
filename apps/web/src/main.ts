/**
 * The teaching page: reads the address (`?shape=B,N,d&kind=&impl=&autorun=1`), finds the reader's GPU, runs the
 * ladder and draws the table, the chart and the selected rung. Before a run it estimates each rung's time and warns
 * when the run is long; Stop ends a run at any point. When a run ends, `window.ladderResult` holds one
 * `{ id, status, maxAbsError, ms, reason?, … }` per rung, for test harnesses; a run that does not start (a bad
 * address, an unknown rung, an autorun estimated too long) leaves `[]` there and the reason in `window.ladderError`.
 */
import { adapterName, canRun, oneLine, type RunEnv, type Rung } from '@fa/core';
import { DATA_KINDS, formatShape, validateShape, type DataKind, type Shape } from '@fa/io';
import { LADDER } from '@fa/ladder/browser';
import reference from 'virtual:bench-reference';
import { nearestBenchShape } from './bench-reference.js';
import { drawChart } from './chart.js';
import { drawDetails } from './details.js';
import { CHECK, estimateRun, Estimator, formatDuration, isSoftwareAdapter } from './estimate.js';
import { browserEnv } from './gpu.js';
import { readParams } from './params.js';
import { rungMs, runLadder, type RungRow } from './run-ladder.js';
import { runScaling, scalingCharts, scalingSummary } from './scaling-view.js';
import { drawTable, type TableExtras } from './table.js';
import { drawTree } from './tree.js';
import { ComputeWorker } from './worker-client.js';

export interface LadderResultEntry {
  id: string;
  status: 'pass' | 'fail' | 'skipped';
  maxAbsError: number | null;
  /** The time the rung is judged by: GPU time where measured, else wall time. */
  ms: number | null;
  gpuMs: number | null;
  wallMs: number | null;
  /** Over the rung below that ran, like with like (`speedupBasis`: both GPU times, or both wall times). */
  speedup: number | null;
  speedupBasis: 'gpu' | 'wall' | null;
  reason?: string;
}

declare global {
  interface Window {
    ladderResult?: LadderResultEntry[];
    ladderError?: string;
  }
}

/** An estimate above this shows as a warning. */
const WARN_MS = 60_000;
/** `autorun=1` does not start a run estimated longer than this: the reader starts it with Run. */
const AUTORUN_LIMIT_MS = 120_000;

const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
const form = byId('controls') as HTMLFormElement;
const input = (name: string): HTMLInputElement => form.elements.namedItem(name) as HTMLInputElement;
const choice = (name: string): HTMLSelectElement => form.elements.namedItem(name) as HTMLSelectElement;
const runButton = byId('run') as HTMLButtonElement;
const stopButton = byId('stop') as HTMLButtonElement;
const note = byId('note') as HTMLParagraphElement;
const estimateLine = byId('estimate') as HTMLParagraphElement;
const adapterLine = byId('adapter') as HTMLParagraphElement;
const softwareNote = byId('software') as HTMLParagraphElement;
const referenceLine = byId('reference') as HTMLParagraphElement;
const tableBody = (byId('results') as HTMLTableElement).tBodies[0] as HTMLTableSectionElement;
const chart = document.getElementById('chart') as unknown as SVGSVGElement;
const details = byId('details');
const tree = byId('tree');

const params = readParams(location.search);
let selected: string = params.impl[0] ?? LADDER.find((r) => r.kind === 'gpu')?.id ?? LADDER[0]?.id ?? '';
let lastRows: readonly RungRow[] = LADDER.map((rung) => ({ rung, status: 'waiting' }));
let extras: TableExtras = {};

/** What the rungs may use: the reader's GPU (or why there is none) and one CPU thread, the worker's. */
let env: RunEnv = { threads: 1, gpuUnavailableReason: 'looking for a GPU' };
let worker: ComputeWorker | undefined;
let current: { controller: AbortController } | undefined;

function redraw(): void {
  drawTable(tableBody, lastRows, selected, select, extras);
  drawTree(tree, LADDER, selected, select);
}

function select(id: string): void {
  const rung = LADDER.find((r) => r.id === id);
  if (!rung) return;
  selected = id;
  drawDetails(details, rung, LADDER);
  redraw();
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
      gpuMs: row.gpuMs ?? null,
      wallMs: row.wallMs ?? null,
      speedup: row.speedup ?? null,
      speedupBasis: row.speedupBasis ?? null,
    };
    if (row.reason !== undefined) entry.reason = row.reason;
    else if (row.status !== 'pass' && row.status !== 'skipped') entry.reason = `the run ended with the rung ${row.status}`;
    return entry;
  });
}

/** The shape in the form, or undefined while it is not a valid one. */
function formShape(): Shape | undefined {
  try {
    return validateShape({ B: Number(input('B').value), N: Number(input('N').value), d: Number(input('d').value) });
  } catch {
    return undefined;
  }
}

/** The H100 column and its caption, for the bench shape nearest `shape`. */
function showReference(shape: Shape): void {
  const bench = nearestBenchShape(reference, shape);
  extras = { ...extras, h100: (id) => bench?.rungs[id]?.gflops };
  const at = bench ? formatShape(bench.shape) : 'no bench shape';
  byId('h100-head').title = `hw4-cli bench on ${reference.adapter}, ${at}`;
  referenceLine.textContent = bench
    ? `H100 GFLOP/s: hw4-cli bench on ${reference.adapter} (${reference.date}), steady-state kernel time at ${at}, the bench shape nearest yours; the CPU rungs on its host's ${reference.cpu} (${reference.source} in the repository).`
    : '';
}

/** What a run of `rungs` on `shape` would take here, in the table (waiting rows) and in the line above it. */
function estimator(shape: Shape, rungs: readonly Rung[]): Estimator {
  return new Estimator(estimateRun(shape, rungs, env, reference, (rung) => canRun(rung, shape, env) === true));
}

function showEstimate(ms: number, running: boolean, checkMs: number | undefined): void {
  const long = ms > WARN_MS;
  estimateLine.classList.toggle('warn', long);
  const checks = checkMs === undefined ? '' : `, checking against the oracle about ${formatDuration(checkMs)}`;
  estimateLine.textContent = running
    ? `About ${formatDuration(ms)} left (estimated; Stop ends the run now).`
    : `${long ? 'A long run: ' : ''}about ${formatDuration(ms)} here for this shape (each rung's estimate is in the table${checks}). ` +
      `Estimates are rough${long ? '; a run can be stopped at any point with Stop' : ''}.`;
}

/** The estimates for the form's shape and choice of rungs, shown before a run. */
function refreshEstimate(): void {
  if (current) return;
  const shape = formShape();
  if (!shape) {
    estimateLine.textContent = '';
    extras = { ...extras, estimate: undefined };
    redraw();
    return;
  }
  showReference(shape);
  const id = choice('impl').value;
  const chosen = id === '' ? LADDER : LADDER.filter((r) => r.id === id);
  const estimate = estimator(shape, chosen);
  extras = { ...extras, estimate: (rung) => estimate.ms(rung) };
  showEstimate(estimate.remaining(new Set()), false, estimate.ms(CHECK));
  lastRows = LADDER.map((rung) => ({ rung, status: 'waiting' }));
  redraw();
}

async function start(ids: readonly string[], autorun: boolean): Promise<void> {
  if (!worker || current) return;
  const runWorker = worker;
  delete window.ladderResult;
  delete window.ladderError;
  const controller = new AbortController();
  try {
    const shape = validateShape({ B: Number(input('B').value), N: Number(input('N').value), d: Number(input('d').value) });
    const kind = choice('kind').value as DataKind;
    const unknown = ids.filter((id) => !LADDER.some((r) => r.id === id));
    if (unknown.length > 0) throw new Error(`unknown rung ${unknown.join(', ')}`);
    const rungs = ids.length === 0 ? LADDER : LADDER.filter((r) => ids.includes(r.id));
    showReference(shape);
    const estimate = estimator(shape, rungs);
    extras = { ...extras, estimate: (rung) => estimate.ms(rung) };
    const total = estimate.remaining(new Set());
    showEstimate(total, false, estimate.ms(CHECK));
    if (autorun && total > AUTORUN_LIMIT_MS) {
      const message = `not started: this run would take about ${formatDuration(total)} here (estimated), more than autorun starts by itself (${formatDuration(AUTORUN_LIMIT_MS)}); press Run to start it anyway, or choose a smaller shape`;
      note.textContent = `Autorun ${message}.`;
      window.ladderError = message;
      window.ladderResult = [];
      return;
    }
    current = { controller };
    runButton.disabled = true;
    stopButton.disabled = false;
    const done = new Set<string>();
    const { rows, stopped } = await runLadder({
      shape,
      kind,
      seed: params.seed,
      rungs,
      env,
      worker: runWorker,
      signal: controller.signal,
      onUpdate: (rowsNow) => {
        lastRows = rowsNow;
        redraw();
        drawChart(chart, rowsNow);
      },
      onNote: (text) => {
        note.textContent = `${formatShape(shape)}, ${kind} data: ${text}`;
      },
      onDone: (key, elapsedMs) => {
        estimate.observe(key, elapsedMs);
        done.add(key);
        showEstimate(estimate.remaining(done), true, undefined);
      },
    });
    estimateLine.textContent = stopped ? 'Stopped: the rung under way and those after it were not finished.' : '';
    estimateLine.classList.remove('warn');
    window.ladderResult = toResult(rows);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    note.textContent = `The run stopped: ${message}`;
    window.ladderError = message;
    window.ladderResult = [];
  } finally {
    current = undefined;
    runButton.disabled = false;
    stopButton.disabled = true;
  }
}

/**
 * Stop: the run ends at once. A CPU rung or the oracle ends with its worker (terminated, a fresh one started). A GPU
 * rung's work is already submitted and WebGPU cannot take it back: the page stops waiting for it, and the GPU finishes
 * it before it runs anything else (the next GPU rung waits that long; the page says so).
 */
/** The scaling view: the selected GPU rung (or lean-loop) at the studies' sizes with the form's B and d. */
async function startScaling(): Promise<void> {
  const scalingNote = byId('scaling-note');
  const charts = byId('scaling-charts');
  const button = byId('scaling-run') as HTMLButtonElement;
  const fail = (message: string): void => {
    scalingNote.textContent = message;
    window.scalingError = message;
  };
  const shape = formShape();
  const id = choice('impl').value || 'lean-loop';
  const rung = LADDER.find((r) => r.id === id);
  if (!shape) {
    fail('the scaling sweep needs a valid shape in the form (its B and d are used)');
    return;
  }
  if (rung?.kind !== 'gpu') {
    fail(`the scaling sweep runs a GPU rung; ${id} is not one`);
    return;
  }
  const can = canRun(rung, { ...shape, N: 1024 }, env);
  if (can !== true) {
    fail(`${rung.id} cannot run here: ${can}`);
    return;
  }
  button.disabled = true;
  charts.replaceChildren();
  try {
    const result = await runScaling(rung, env, shape, (text) => {
      scalingNote.textContent = `Measured ${text} …`;
    });
    const svgs = scalingCharts(result, shape);
    charts.innerHTML = `${svgs.n}${svgs.batch}`;
    scalingNote.textContent = scalingSummary(result);
    window.scalingResult = result;
  } catch (error) {
    fail(`the scaling sweep stopped: ${oneLine(error)}`);
  } finally {
    button.disabled = false;
  }
}

function stop(): void {
  if (!current) return;
  const gpuRunning = lastRows.some((row) => row.status === 'running' && row.rung.kind === 'gpu');
  current.controller.abort();
  worker?.restart();
  if (gpuRunning) {
    note.textContent = 'Stopped. The GPU still finishes the work the stopped rung submitted (WebGPU cannot take it back): a GPU rung started now waits for it.';
  }
}

async function boot(): Promise<void> {
  fillControls();
  redraw();
  drawChart(chart, lastRows);
  select(selected);
  window.addEventListener('hashchange', () => {
    const id = /rung=([a-z0-9-]+)/.exec(location.hash)?.[1];
    if (id) select(id);
  });
  if (params.problems.length > 0) note.textContent = `In the address: ${params.problems.join('; ')}`;
  env = await describeGpu();
  worker = new ComputeWorker();
  refreshEstimate();
  form.addEventListener('input', refreshEstimate);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = choice('impl').value;
    void start(id === '' ? [] : [id], false);
  });
  stopButton.addEventListener('click', stop);
  byId('scaling-run').addEventListener('click', () => void startScaling());
  if (params.scaling) {
    await startScaling();
    return;
  }
  if (!params.autorun) return;
  if (params.problems.length > 0) {
    // A run on the defaults the bad values fell back to is not the run the address asked for: run nothing.
    const message = `nothing run: the address has ${params.problems.length === 1 ? 'a problem' : 'problems'}: ${params.problems.join('; ')}`;
    note.textContent = `Autorun: ${message}.`;
    window.ladderError = message;
    window.ladderResult = [];
    return;
  }
  await start(params.impl, true);
}

async function describeGpu(): Promise<RunEnv> {
  const found = await browserEnv();
  const report = found.gpu?.report;
  const software = isSoftwareAdapter(found);
  adapterLine.textContent = report
    ? `GPU: ${adapterName(report)}${software ? ' (a software adapter: slower than a real GPU)' : ''}; features: ${report.features.join(', ') || 'none'}; timing: ${found.gpu.hasTimestamps ? 'GPU timestamps' : 'wall clock'}`
    : `No GPU: ${found.gpuUnavailableReason ?? 'unknown reason'}. The CPU rungs still run.`;
  softwareNote.hidden = !software;
  return found;
}

void boot();
