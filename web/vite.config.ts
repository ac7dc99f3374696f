/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The console is served by coupond at / from the embedded web/dist; hashed
// files go under assets/, which the Go side caches for a year.
export default defineConfig({
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: { '/graphql': 'http://127.0.0.1:8080', '/export': 'http://127.0.0.1:8080' },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
