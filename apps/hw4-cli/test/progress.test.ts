import { describe, expect, it } from 'vitest';
import { Progress, progressLine } from '../src/progress.js';

describe('progress bar', () => {
  it('shows units done, throughput in units and MB per second, and time left', () => {
    const line = progressLine(400, 1000, 'batches', 2000, 49152);
    expect(line).toContain(' 40% 400/1000 batches');
    expect(line).toContain('200 batches/s');
    expect(line).toContain('9.8 MB/s');
    expect(line).toContain('~3 s left');
    expect(line.startsWith(`[${'#'.repeat(12)}${'.'.repeat(18)}]`)).toBe(true);
  });

  it('drops time left when done and the rate before any time has passed', () => {
    expect(progressLine(1000, 1000, 'batches', 4000)).not.toContain('left');
    expect(progressLine(0, 10, 'batches', 0)).toBe(`[${'.'.repeat(30)}]   0% 0/10 batches, 0.0 s`);
  });

  it('stays silent for the first two seconds and when disabled, and clears its line at the end', () => {
    let clock = 0;
    const written: string[] = [];
    const stream = { write: (text: string) => written.push(text) > 0 };
    const bar = new Progress(10, 'batches', true, { stream, now: () => clock, bytesPerUnit: 1e6 });
    bar.update(1);
    expect(written).toEqual([]);
    clock = 2500;
    bar.update(5);
    expect(written).toHaveLength(1);
    expect(written[0]).toContain('2.00 batches/s, 2.0 MB/s, ~3 s left');
    clock = 2550;
    bar.update(6);
    expect(written).toHaveLength(1);
    bar.finish();
    expect(written[1]).toBe('\r\x1b[K');

    const silent: string[] = [];
    const off = new Progress(10, 'batches', false, { stream: { write: (t: string) => silent.push(t) > 0 }, now: () => 5000 });
    off.update(5);
    off.finish();
    expect(silent).toEqual([]);
  });
});
