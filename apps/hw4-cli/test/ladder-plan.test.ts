/**
 * What `hw4-cli ladder` (and so `npm run quickstart`) runs on each kind of machine, without running it: on a software
 * adapter the quick ladder stays small (the CPU rungs, one GPU rung per family, a small shape); on a real GPU, and
 * with no GPU, every rung at the default shape.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AdapterReport } from '@fa/core';
import { IMPLEMENTATIONS, LADDER } from '@fa/ladder';
import { DEFAULT_LADDER_SHAPE, ladderPlan, QUICK_GPU_RUNGS, QUICK_LADDER_SHAPE } from '../src/commands/ladder.js';

function adapter(vendor: string, architecture: string, device: string, isFallbackAdapter: boolean): AdapterReport {
  return { vendor, architecture, device, description: '', features: [], limits: {} as AdapterReport['limits'], isFallbackAdapter };
}

const lavapipe = adapter('mesa', '', 'llvmpipe-llvm-15-0-6-256-bits', true);
const swiftshader = adapter('google', 'swiftshader', 'subzero', false);
const h100 = adapter('nvidia', 'hopper', 'nvidia-h100-80gb-hbm3', false);
const cpuIds = LADDER.filter((r) => r.kind === 'cpu').map((r) => r.id);
const ids = (plan: ReturnType<typeof ladderPlan>): string[] => plan.rungs.map((r) => r.id);

describe('the quick ladder on a software adapter', () => {
  it.each([
    ['lavapipe', lavapipe],
    ['SwiftShader', swiftshader],
  ])('%s: the CPU rungs and one GPU rung per family, at a small shape', (_name, report) => {
    const plan = ladderPlan(undefined, undefined, report);
    expect(plan.quick).toBe(true);
    expect(plan.shape).toEqual({ B: 2, N: 128, d: 16 });
    expect(ids(plan)).toEqual([...cpuIds, ...LADDER.filter((r) => QUICK_GPU_RUNGS.some((q) => q.id === r.id)).map((r) => r.id)]);
    expect(plan.rungs.filter((r) => r.kind === 'gpu')).toHaveLength(QUICK_GPU_RUNGS.length);
    expect(QUICK_GPU_RUNGS.length).toBeLessThanOrEqual(6);
    // Small: the software GPU compiles the kernels of the smallest head sizes in seconds (docs/ci.md).
    expect(plan.shape.d).toBeLessThanOrEqual(16);
    expect(plan.shape.B * plan.shape.N).toBeLessThanOrEqual(512);
  });

  it('each family names a GPU rung of the ladder, once', () => {
    for (const { id } of QUICK_GPU_RUNGS) expect(LADDER.find((r) => r.id === id)?.kind, id).toBe('gpu');
    expect(new Set(QUICK_GPU_RUNGS.map((q) => q.id)).size).toBe(QUICK_GPU_RUNGS.length);
    expect(new Set(QUICK_GPU_RUNGS.map((q) => q.family)).size).toBe(QUICK_GPU_RUNGS.length);
  });

  it('--shape keeps the quick set at that shape; --impl all runs every rung; named rungs are run as named', () => {
    expect(ladderPlan(undefined, '1,64,32', lavapipe)).toMatchObject({ quick: true, shape: { B: 1, N: 64, d: 32 } });
    expect(ids(ladderPlan('all', undefined, lavapipe))).toEqual(IMPLEMENTATIONS.map((r) => r.id));
    expect(ladderPlan('all', undefined, lavapipe)).toMatchObject({ quick: false, shape: { B: 4, N: 512, d: 64 } });
    expect(ids(ladderPlan('naive,cpu', undefined, lavapipe))).toEqual(['naive', 'cpu']);
  });
});

describe('the ladder elsewhere', () => {
  it('on a real GPU and with no GPU: every rung at the default shape', () => {
    for (const report of [h100, undefined]) {
      const plan = ladderPlan(undefined, undefined, report);
      expect(plan.quick).toBe(false);
      expect(ids(plan)).toEqual(IMPLEMENTATIONS.map((r) => r.id));
      expect(plan.shape).toEqual({ B: 4, N: 512, d: 64 });
    }
    expect(DEFAULT_LADDER_SHAPE).toBe('4,512,64');
    expect(QUICK_LADDER_SHAPE).toBe('2,128,16');
  });

  it('--impl quick runs the quick set on any GPU', () => {
    expect(ladderPlan('quick', undefined, h100)).toMatchObject({ quick: true, shape: { B: 2, N: 128, d: 16 } });
  });
});

describe('npm run quickstart', () => {
  it('runs hw4-cli ladder as it is, so the quick start and the CLI agree on what runs', () => {
    const script = readFileSync(new URL('../../../scripts/quickstart.mjs', import.meta.url), 'utf8');
    expect(script).toMatch(/'ladder',/);
    expect(script).not.toMatch(/--impl|--shape/);
  });
});
