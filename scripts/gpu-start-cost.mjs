#!/usr/bin/env node
// The part of a GPU program's start that no code of ours runs: loading Dawn (the `webgpu` package), finding the
// adapter and creating the device, timed in a bare Node process, as the floor under hw4-cli's setup. Prints ms for
// each step since the process began (performance.now()), then exits the way hw4-cli does (process.exit).
// Usage: node scripts/gpu-start-cost.mjs [PATH-TO-webgpu]   (default: the workspace's webgpu package)
const path = process.argv[2] ?? 'webgpu';
const marks = [['node started', performance.now()]];
const webgpu = await import(path);
marks.push(['webgpu loaded', performance.now()]);
const gpu = webgpu.create(['enable-dawn-features=disable_robustness']);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
marks.push(['adapter', performance.now()]);
const device = await adapter.requestDevice();
marks.push(['device', performance.now()]);
device.destroy();
console.log(marks.map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`).join(', '));
process.exit(0);
