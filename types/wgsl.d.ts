/** WGSL kernels are imported as text (tsup's text loader; a vitest plugin in tests). */
declare module '*.wgsl' {
  const code: string;
  export default code;
}
