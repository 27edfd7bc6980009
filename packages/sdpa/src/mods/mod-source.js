/**
 * The WGSL of score and mask functions (@fa/core's mods.ts has the contract): the caller's functions with their
 * buffers declared in group 1, appended to attention-fp32 (`modKernel`, with a few one-line changes to its loop) or to
 * the evaluation kernel of the CPU computations; and their check, which compiles each function alone first so that a
 * WGSL error is reported in one line at the caller's own line and column.
 */
import { MASK_MOD_SIGNATURE, SCORE_MOD_SIGNATURE, SdpaArgumentError } from '@fa/core';
import evalCode from './mod-eval.wgsl';
import kernelCode from './mod-kernel.wgsl';
/** Group 1, binding 0 is the pre-pass's ModParams; the buffers follow in name order. */
export const MOD_BUFFER_FIRST_BINDING = 1;
/** The buffers' declarations: `@group(1) @binding(n) var<storage, read> NAME: array<T>;` in name order. */
export function modDeclarations(mods) {
    return mods.buffers.map(({ name, type }, n) => `@group(1) @binding(${MOD_BUFFER_FIRST_BINDING + n}) var<storage, read> ${name}: array<${type}>;`).join('\n');
}
const lineCount = (text) => text.split('\n').length;
/** The functions' part appended after `before` (the module's text so far): the switches, buffers, functions. */
function modBlock(mods, before, labels) {
    const head = [
        '',
        '// The score and mask functions (the caller\'s) and the buffers they read.',
        `const MOD_SCORES: bool = ${mods.scoreMod !== undefined};`,
        `const MOD_MASKS: bool = ${mods.maskMod !== undefined};`,
        modDeclarations(mods),
        mods.scoreMod === undefined ? `${SCORE_MOD_SIGNATURE} { return s; }` : '',
        mods.maskMod === undefined ? `${MASK_MOD_SIGNATURE} { return true; }` : '',
        '',
    ].join('\n');
    let code = `${before}\n${head}`;
    const parts = [];
    const sources = [
        { label: labels.scoreMod, source: mods.scoreMod },
        // The same text for both (one file defining both functions) is appended once.
        { label: labels.maskMod, source: mods.maskMod === mods.scoreMod ? undefined : mods.maskMod },
    ];
    for (const { label, source } of sources) {
        if (source === undefined)
            continue;
        parts.push({ label, source, firstLine: lineCount(code) + 1 });
        code = `${code}\n${source}`;
    }
    return { code: `${code}\n`, parts };
}
const LIBRARY_LABELS = { scoreMod: 'scoreMod', maskMod: 'maskMod' };
/**
 * The lines attention-fp32's loop changes for the functions, each [the line, its replacement]: the workgroup's batch
 * and head kept for score_mod; score_mod first in scoreTerms (before the softcap), which then runs on every score;
 * mask_mod among applyMask's exclusions (modKept); the tile lists' MOD_PARTIAL and MOD_DIAGONAL bits read off tile
 * numbers and into the test per score; the tile lists writable by the pre-pass.
 */
const KERNEL_CHANGES = [
    ['  let bm = b + params.batch0;        // the batch in the masks\n', '  let bm = b + params.batch0;        // the batch in the masks\n  modBatch = bm;\n  modHead = hq;\n'],
    ['  var r = s;\n  if (params.softcap == 1u) { r = softcapped(r); }', '  var r = modScores(s, i, j0, Lk);\n  if (params.softcap == 1u) { r = softcapped(r); }'],
    ['      if (GENERAL == 1u && (params.softcap == 1u || params.alibi == 1u)) {', '      if (GENERAL == 1u && (MOD_SCORES || params.softcap == 1u || params.alibi == 1u)) {'],
    [
        '  return select(vec4<f32>(LOWEST), r, kept);\n}',
        '  if (MOD_MASKS && i < params.Lq) { kept = modKept(kept, b, hq, i, j, Lk); }\n  return select(vec4<f32>(LOWEST), r, kept);\n}',
    ],
    ['{ return tileLists[listStart + step]; }', '{ return tileLists[listStart + step] & ~(MOD_PARTIAL | MOD_DIAGONAL); }'],
    ['    let checked = key0 + BC > Lk ||', '    let modFlags = modTileFlags(n, listStart);\n    modDiagonal = (modFlags & MOD_DIAGONAL) != 0u;\n    let checked = (modFlags & MOD_PARTIAL) != 0u || key0 + BC > Lk ||'],
    ['@group(0) @binding(8) var<storage, read> tileLists: array<u32>;', '@group(0) @binding(8) var<storage, read_write> tileLists: array<u32>;'],
];
/** attention-fp32 (`kernel`, either tensor type) with the functions compiled in, and where their lines begin. */
function modKernelBlock(kernel, mods, labels = LIBRARY_LABELS) {
    let code = kernel.code;
    for (const [line, replacement] of KERNEL_CHANGES) {
        if (code.split(line).length !== 2)
            throw new Error(`${kernel.label} lacks the line the score and mask functions change: ${line.trim()}`);
        code = code.replace(line, replacement);
    }
    const block = modBlock(mods, `${code}\n${kernelCode}`, labels);
    return { source: { label: `${kernel.label} with score and mask functions`, code: block.code }, block };
}
/** attention-fp32 (`kernel`) with the functions compiled in: its pipelines are cached by this text. */
export function modKernel(kernel, mods) {
    return modKernelBlock(kernel, mods).source;
}
/** The evaluation kernel of the CPU computations with the functions. */
export function modEvalKernel(mods) {
    return { label: 'score and mask functions evaluated', code: modBlock(mods, evalCode, LIBRARY_LABELS).code };
}
/** The names the kernels declare at module scope, which a mod buffer may not take. */
function declaredNames(code) {
    const names = new Set();
    for (const match of code.matchAll(/^(?:fn|const|override|struct|alias|var(?:<[^>]*>)?)\s+(\w+)/gm))
        names.add(match[1]);
    for (const match of code.matchAll(/^@group\(\d+\)\s*@binding\(\d+\)\s*var(?:<[^>]*>)?\s+(\w+)/gm))
        names.add(match[1]);
    return names;
}
/** The first error of compiling `code`, or undefined (the device's own error for it caught, not reported again). */
async function firstError(device, code) {
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: 'score and mask functions, checked', code });
    const info = await module.getCompilationInfo();
    await device.popErrorScope();
    return info.messages.find((m) => m.type === 'error');
}
const oneLine = (text) => text.replace(/\s+/g, ' ').trim();
/** An error at a line of a module, as the caller's `label:LINE:COL: message` where it lies in one of the functions. */
function placed(error, block) {
    const part = [...block.parts].reverse().find((p) => error.lineNum >= p.firstLine);
    if (!part || error.lineNum >= part.firstLine + lineCount(part.source))
        return undefined;
    return `${part.label}:${error.lineNum - part.firstLine + 1}:${error.linePos}: ${oneLine(error.message)}`;
}
/**
 * Checks the functions on `gpu` before anything compiles, each refusal one SdpaArgumentError line: a buffer named as
 * something the kernels declare; a WGSL error in a function, at its own line and column (`label:LINE:COL: message`,
 * the label the caller's name for it: 'scoreMod', or `--score-mod FILE.wgsl` in the CLI); a function whose signature
 * is not the contract's; anything that keeps the functions from compiling into attention-fp32 (`kernel`).
 */
export async function checkModFunctions(gpu, mods, kernel, labels = LIBRARY_LABELS) {
    const { device } = gpu;
    const reserved = declaredNames(`${modKernelBlock(kernel, { buffers: [] }).source.code}\n${modEvalKernel({ buffers: [] }).code}`);
    const clash = mods.buffers.find(({ name }) => reserved.has(name));
    if (clash)
        throw new SdpaArgumentError(`modBuffers.${clash.name}: the kernel declares ${clash.name} itself; give the buffer another name`);
    const functions = [
        { label: labels.scoreMod, source: mods.scoreMod, name: 'score_mod', signature: SCORE_MOD_SIGNATURE, call: 'let x: f32 = score_mod(0.0f, 0u, 0u, 0u, 0u);' },
        { label: labels.maskMod, source: mods.maskMod, name: 'mask_mod', signature: MASK_MOD_SIGNATURE, call: 'let x: bool = mask_mod(0u, 0u, 0u, 0u);' },
    ];
    for (const { label, source, name, signature, call } of functions) {
        if (source === undefined)
            continue;
        // The function alone, its lines the module's first, then the buffers and a call with the contract's types.
        const declarations = modDeclarations(mods);
        const probe = `${source}\n${declarations}\nfn contract_check() { ${call} _ = x; }\n`;
        const error = await firstError(device, probe);
        if (!error)
            continue;
        const sourceLines = lineCount(source);
        if (error.lineNum >= 1 && error.lineNum <= sourceLines)
            throw new SdpaArgumentError(`${label}:${error.lineNum}:${error.linePos}: ${oneLine(error.message)}`);
        if (error.lineNum > sourceLines + lineCount(declarations))
            throw new SdpaArgumentError(`${label}: its ${name} is not ${signature} (${oneLine(error.message)})`);
        throw new SdpaArgumentError(`modBuffers: ${oneLine(error.message)}; name the buffers as WGSL identifiers that are not keywords`);
    }
    // Together in the kernel: a helper named as one of the kernel's, or the two functions clashing with each other.
    const { source, block } = modKernelBlock(kernel, mods, labels);
    const error = await firstError(device, source.code);
    if (!error)
        return;
    const where = placed(error, block);
    if (where !== undefined)
        throw new SdpaArgumentError(where);
    throw new SdpaArgumentError(`${labels.scoreMod} and ${labels.maskMod} do not compile into the kernel: ${oneLine(error.message)} (a name of theirs may be one the kernel declares)`);
}
//# sourceMappingURL=mod-source.js.map