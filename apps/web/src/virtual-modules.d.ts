/** Modules the page's build makes (vite.config.ts); the shape of BenchReference in bench-reference.ts. */
declare module 'virtual:bench-reference' {
  const reference: {
    adapter: string;
    cpu: string;
    date: string;
    source: string;
    shapes: { shape: { B: number; N: number; d: number }; rungs: Record<string, { ms: number; gflops: number }> }[];
  };
  export default reference;
}
