// Types of scripts/spirv-text.mjs, for its test (experiments/test/spirv-text.test.ts).
export interface DumpedPipeline {
  title: string;
  entry: string;
  invocations: number;
  asm: string;
}
export function pipelinesOf(dump: string): DumpedPipeline[];
export const NEWER_ENUMERANTS: [RegExp, string][];
export const STAND_INS: Record<string, [string, number, number]>;
export function standIn(line: string): string;
export function toKhr(bytes: Uint8Array, text: string): Uint8Array;
export function forOldAssembler(asm: string): string;
