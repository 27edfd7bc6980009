import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// The declarations name WebGPU's types (GPUDevice, GPUBuffer, …): each .d.ts references @webgpu/types, a dependency,
// so a consumer type-checks without adding it by hand (also with skipLibCheck: false).
export default defineConfig(
  packageBuild({ index: 'src/index.ts', 'node/index': 'src/node/index.ts' }, { dts: { banner: '/// <reference types="@webgpu/types" />' } }),
);
