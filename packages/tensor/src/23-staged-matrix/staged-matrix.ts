/**
 * Rung 23, staged-matrix: rung 17's compensated products with K_j and V_j staged once per workgroup in padded
 * workgroup memory for NSG subgroups of 16 query rows each, and the softmax and O kept by invocation pairs per row
 * (staged-matrix.wgsl).
 */
import { subgroupPlan } from '@fa/core';
import { matrixRung } from '../matrix-rung.js';
import code from './staged-matrix.wgsl';

export const STAGED_MATRIX_KERNEL = { label: 'staged-matrix.wgsl', code };

export const stagedMatrix = matrixRung({
  id: 'staged-matrix',
  parent: 'compensated-matrix',
  title: 'GPU, tensor cores with error compensation, K_j and V_j staged once per workgroup for four subgroups, softmax by row pairs',
  delta: "Rung 17's three products per multiply, with the K and V tiles copied once into padded workgroup memory and shared by four subgroups, and each query row's softmax and O kept by two invocations.",
  kernel: STAGED_MATRIX_KERNEL,
  parts: 2,
  plan: subgroupPlan(STAGED_MATRIX_KERNEL),
  mainReads: 'qkv16v',
});
