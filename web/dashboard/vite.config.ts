import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Served by the API under /dashboard/; everything is bundled, nothing comes from a CDN.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, chunkSizeWarningLimit: 200 },
});
