/**
 * Dawn's bounds checks in Node: off by default (the toggle in the one enable string), on with FA_BOUNDS_CHECKS=1,
 * and reported on the context.
 */
import { describe, expect, it } from 'vitest';
import { acquireNodeGpu, boundsChecksWanted, dawnFlags, extraDawnToggles } from '../src/node/index.js';

describe('bounds checks', () => {
  it('puts disable_robustness in the one enable string unless checks are wanted', () => {
    const off = dawnFlags(false);
    expect(off.filter((f) => f.startsWith('enable-dawn-features='))).toEqual(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness']);
    expect(dawnFlags(true).join(' ')).not.toContain('disable_robustness');
  });

  it('reads FA_BOUNDS_CHECKS: 1, on or true turn them on; anything else leaves them off', () => {
    for (const value of ['1', 'on', 'ON', 'true']) expect(boundsChecksWanted({ FA_BOUNDS_CHECKS: value })).toBe(true);
    for (const value of [undefined, '', '0', 'off', 'no']) expect(boundsChecksWanted({ FA_BOUNDS_CHECKS: value })).toBe(false);
  });

  it('adds FA_DAWN_TOGGLES to the one enable string, toggle names only', () => {
    expect(extraDawnToggles({ FA_DAWN_TOGGLES: 'dump_shaders, disable_symbol_renaming' })).toEqual(['dump_shaders', 'disable_symbol_renaming']);
    expect(extraDawnToggles({ FA_DAWN_TOGGLES: 'dump_shaders,x disable-dawn-features=y,' })).toEqual(['dump_shaders']);
    expect(extraDawnToggles({})).toEqual([]);
    const flags = dawnFlags(false, ['dump_shaders']);
    expect(flags.filter((f) => f.startsWith('enable-dawn-features='))).toEqual(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness,dump_shaders']);
  });

  it('says on the context which way the device was made', async (context) => {
    const acquired = await acquireNodeGpu({ env: { FA_BOUNDS_CHECKS: '1' } });
    if (!acquired.gpu) {
      context.skip(`no GPU: ${acquired.reason}`);
      return;
    }
    expect(acquired.gpu.report.boundsChecks).toBe(true);
    acquired.gpu.destroy();
  });
});
