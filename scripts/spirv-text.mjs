// The text side of scripts/kernel-registers.mjs, apart so that it can be tested without a GPU: Dawn's dump split into
// one SPIR-V module per pipeline, and each module made assemblable by SPIRV-Tools 2023.1 (Debian 12's `spirv-tools`),
// which predates two things Tint emits: the MaximallyReconvergesKHR execution mode and the KHR cooperative matrix
// instructions of the subgroup-matrix kernels.

/**
 * The pipelines of a dump printed with Dawn's `dump_shaders` toggle: Dawn prints "// Dumped WGSL:" then a module's
 * text, and "/* Dumped SPIRV disassembly *\/" then one pipeline's SPIR-V (each after a line "info:"). Each pipeline's
 * title is the first line of the WGSL printed before it; whatever follows a module's last OpFunctionEnd is not SPIR-V.
 * @param {string} dump
 * @returns {{ title: string, entry: string, invocations: number, asm: string }[]}
 */
export function pipelinesOf(dump) {
  let wgslTitle = '?';
  const pipelines = [];
  for (const block of dump.split(/^info:\s*$/m)) {
    const wgsl = block.indexOf('// Dumped WGSL:');
    if (wgsl >= 0) {
      const first = block.slice(wgsl).split('\n').slice(1).find((line) => line.trim() !== '') ?? '?';
      wgslTitle = first.replace(/^\/\/\s*/, '').slice(0, 60);
      continue;
    }
    const spirv = block.indexOf('/* Dumped SPIRV disassembly */');
    if (spirv < 0) continue;
    const text = block.slice(spirv).split('\n').slice(1).join('\n');
    const end = text.lastIndexOf('OpFunctionEnd');
    if (end < 0) continue;
    const asm = `${text.slice(0, end + 'OpFunctionEnd'.length)}\n`;
    const entry = /OpEntryPoint GLCompute %(\S+)/.exec(asm)?.[1] ?? '?';
    const size = /OpExecutionMode %\S+ LocalSize (\d+) (\d+) (\d+)/.exec(asm);
    const invocations = size ? Number(size[1]) * Number(size[2]) * Number(size[3]) : 0;
    pipelines.push({ title: wgslTitle, entry, invocations, asm });
  }
  return pipelines;
}

/** Enumerants newer than some spirv-as releases know, written as their numbers ('!N' is one literal word). */
export const NEWER_ENUMERANTS = [[/\bMaximallyReconvergesKHR\b/g, '!6023'], [/^(\s*OpCapability) CooperativeMatrixKHR$/gm, '$1 !6022']];

/**
 * SPV_KHR_cooperative_matrix's instructions, newer than spirv-as 2023.1: each is written as an older instruction whose
 * words line up with it (the NV extension's, or OpGroupDecorate for the type, which the KHR one has one more id than the
 * NV type), assembled, and its opcode then set to the KHR one in the binary (`toKhr`). Tint emits none of the stand-ins.
 */
export const STAND_INS = {
  OpTypeCooperativeMatrixKHR: ['OpGroupDecorate', 74, 4456],
  OpCooperativeMatrixLoadKHR: ['OpCooperativeMatrixLoadNV', 5359, 4457],
  OpCooperativeMatrixStoreKHR: ['OpCooperativeMatrixStoreNV', 5360, 4458],
  OpCooperativeMatrixMulAddKHR: ['OpCooperativeMatrixMulAddNV', 5361, 4459],
  OpCooperativeMatrixLengthKHR: ['OpCooperativeMatrixLengthNV', 5362, 4460],
};

/** One line with a KHR cooperative matrix instruction written as its stand-in. */
export function standIn(line) {
  const m = /^(\s*)(?:(%\S+) = )?(Op\w+)(.*)$/.exec(line);
  const known = m && STAND_INS[m[3]];
  if (!known) return line;
  // The type has its result where OpGroupDecorate has its first id: as an operand, not before an `=`.
  if (m[3] === 'OpTypeCooperativeMatrixKHR') return `${m[1]}${known[0]} ${m[2]}${m[4]}`;
  // The KHR multiply-add's optional operands: none (NoneKHR) is the NV form; anything else is not written here.
  const operands = m[4].replace(/\s+NoneKHR\s*$/, '');
  if (m[3] === 'OpCooperativeMatrixMulAddKHR' && /KHR/.test(operands)) throw new Error(`kernel-registers: cannot write ${line.trim()}`);
  return `${m[1]}${m[2] ? `${m[2]} = ` : ''}${known[0]}${operands}`;
}

/**
 * The assembled words with each stand-in's opcode set to its KHR instruction's. Throws unless the binary then holds
 * exactly the KHR instructions the text has, one for one (so a stand-in that assembled otherwise cannot pass).
 */
export function toKhr(bytes, text) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const opcodes = new Map(Object.values(STAND_INS).map(([, from, to]) => [from, to]));
  const found = new Map();
  for (let at = 5; at < words.length; ) {
    const count = words[at] >>> 16;
    const to = opcodes.get(words[at] & 0xffff);
    if (to !== undefined) words[at] = (count << 16) | to;
    found.set(words[at] & 0xffff, (found.get(words[at] & 0xffff) ?? 0) + 1);
    if (count === 0) throw new Error('kernel-registers: an instruction of 0 words');
    at += count;
  }
  for (const [name, [, , opcode]] of Object.entries(STAND_INS)) {
    const written = (text.match(new RegExp(`\\b${name}\\b`, 'g')) ?? []).length;
    if ((found.get(opcode) ?? 0) !== written) {
      throw new Error(`kernel-registers: ${written} ${name} in the text, ${found.get(opcode) ?? 0} in the binary`);
    }
  }
  return bytes;
}

/**
 * A module's SPIR-V text as SPIRV-Tools 2023.1 assembles it: the newer enumerants as numbers, the KHR cooperative
 * matrix instructions as their stand-ins (`toKhr` renumbers them after assembly).
 * @param {string} asm
 */
export function forOldAssembler(asm) {
  return NEWER_ENUMERANTS.reduce((text, [name, number]) => text.replace(name, number), asm).split('\n').map(standIn).join('\n');
}
