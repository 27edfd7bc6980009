/**
 * scripts/spirv-text.mjs, the text side of scripts/kernel-registers.mjs: Dawn's shader dump split per pipeline, and
 * the SPIR-V that SPIRV-Tools 2023.1 cannot assemble (the KHR cooperative matrix instructions) written as stand-ins
 * and renumbered in the binary, checked one for one.
 */
import { describe, expect, it } from 'vitest';
import { forOldAssembler, pipelinesOf, toKhr } from '../../scripts/spirv-text.mjs';

const DUMP = [
  'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced',
  'info:',
  '// Dumped WGSL:',
  '// attention-x: a kernel for the test',
  'enable f16;',
  'info:',
  '/* Dumped SPIRV disassembly */',
  '; SPIR-V',
  '               OpCapability Shader',
  '               OpEntryPoint GLCompute %main "dawn_entry_point" %1',
  '               OpExecutionMode %main LocalSize 128 1 1',
  '       %main = OpFunction %void None %3',
  '               OpFunctionEnd',
  'info:',
  '/* Dumped SPIRV disassembly */',
  '               OpEntryPoint GLCompute %combine "dawn_entry_point" %1',
  '               OpExecutionMode %combine LocalSize 64 1 1',
  '    %combine = OpFunction %void None %3',
  '               OpFunctionEnd',
  'adapter: nvidia / nvidia-h100-80gb-hbm3',
  '| a table the command printed |',
].join('\n');

/** A SPIR-V binary: the 5 header words, then instructions given as [opcode, operand words]. */
function binary(instructions: [number, number][]): Uint8Array {
  const words = [0x07230203, 0x00010400, 0, 100, 0];
  for (const [opcode, operands] of instructions) {
    words.push(((operands + 1) << 16) | opcode);
    for (let k = 0; k < operands; k++) words.push(k + 1);
  }
  return new Uint8Array(new Uint32Array(words).buffer);
}
const opcodes = (bytes: Uint8Array): number[] => {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const found: number[] = [];
  for (let at = 5; at < words.length; at += (words[at] as number) >>> 16) found.push((words[at] as number) & 0xffff);
  return found;
};

describe("Dawn's shader dump", () => {
  it('is split into one SPIR-V module per pipeline, titled by the WGSL printed before it, ending at its last function', () => {
    const pipelines = pipelinesOf(DUMP);
    expect(pipelines.map(({ title, entry, invocations }) => ({ title, entry, invocations }))).toEqual([
      { title: 'attention-x: a kernel for the test', entry: 'main', invocations: 128 },
      { title: 'attention-x: a kernel for the test', entry: 'combine', invocations: 64 },
    ]);
    expect(pipelines[1]?.asm.trimEnd().endsWith('OpFunctionEnd')).toBe(true);
    expect(pipelines[1]?.asm).not.toContain('adapter');
  });
});

describe('SPIR-V for an assembler older than the KHR cooperative matrices', () => {
  it('writes each KHR instruction as a stand-in whose words line up, and the newer enumerants as numbers', () => {
    const asm = [
      '               OpCapability CooperativeMatrixKHR',
      '               OpExecutionMode %main MaximallyReconvergesKHR',
      '        %858 = OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 %uint_16 %uint_0',
      '         %fh = OpCooperativeMatrixLoadKHR %858 %1348 %uint_0 %uint_136 NonPrivatePointer',
      '       %1938 = OpCooperativeMatrixMulAddKHR %940 %1934 %kh %1937 NoneKHR',
      '               OpCooperativeMatrixStoreKHR %1439 %1438 %uint_0 %uint_36 NonPrivatePointer',
      '         %x = OpIAdd %uint %a %b',
    ].join('\n');
    expect(forOldAssembler(asm).split('\n')).toEqual([
      '               OpCapability !6022',
      '               OpExecutionMode %main !6023',
      '        OpGroupDecorate %858 %half %uint_3 %uint_16 %uint_16 %uint_0',
      '         %fh = OpCooperativeMatrixLoadNV %858 %1348 %uint_0 %uint_136 NonPrivatePointer',
      '       %1938 = OpCooperativeMatrixMulAddNV %940 %1934 %kh %1937',
      '               OpCooperativeMatrixStoreNV %1439 %1438 %uint_0 %uint_36 NonPrivatePointer',
      '         %x = OpIAdd %uint %a %b',
    ]);
  });

  it('renumbers the stand-ins in the binary to the KHR opcodes, and refuses a binary whose count differs from the text', () => {
    const text = 'OpTypeCooperativeMatrixKHR OpCooperativeMatrixLoadKHR OpCooperativeMatrixMulAddKHR OpCooperativeMatrixStoreKHR';
    // OpGroupDecorate (74), the NV load (5359), multiply-add (5361) and store (5360), and an OpIAdd (128) left alone.
    const assembled = binary([[74, 6], [5359, 6], [5361, 5], [5360, 5], [128, 4]]);
    expect(opcodes(toKhr(assembled, text))).toEqual([4456, 4457, 4459, 4458, 128]);
    // A stand-in that assembled as something else (here the type as OpGroupMemberDecorate, 75) is caught.
    expect(() => toKhr(binary([[75, 6], [5359, 6], [5361, 5], [5360, 5]]), text)).toThrow(/1 OpTypeCooperativeMatrixKHR in the text, 0 in the binary/);
  });
});
