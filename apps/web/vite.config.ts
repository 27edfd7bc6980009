/**
 * The teaching page builds to static files with relative paths (`base: './'`): dist/ works from any folder or static
 * server, offline. Rung packages resolve to their built dist files, as any consumer's bundler sees them.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 2048 },
  worker: { format: 'es' },
});
