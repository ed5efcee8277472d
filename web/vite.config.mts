import { defineConfig } from 'vite';

// The finance screen, built into dist/web and served by the service at GET / (src/web/static.ts).
// No inline script or style ends up in index.html, so the page runs under a CSP of 'self' only.
export default defineConfig({
  base: '/',
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
  },
  oxc: { jsx: { runtime: 'automatic' } },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
