/**
 * The file of worker module `name` (its path under server/ without the extension, such as
 * `core/plan/write-worker`) for the code at `here` (that code's `import.meta.url`), which a
 * worker thread is started with:
 *
 * - beside a bundle (dist/server/cli/*.cjs, scripts/bundle.mjs), the worker's own bundle there,
 *   `<last part of name>.bundle.cjs`;
 * - in the compiled modules (dist/server/…, the sidecar), `dist/server/<name>.js`;
 * - in the TypeScript sources (the tests import them), that compiled module too: a worker thread
 *   cannot load TypeScript.
 */
export function workerFile(here: string, name: string): URL {
  if (here.endsWith('.cjs')) return new URL(`./${name.slice(name.lastIndexOf('/') + 1)}.bundle.cjs`, here);
  const top = here.slice(0, here.lastIndexOf('/server/'));
  return new URL(`${here.endsWith('.ts') ? `${top}/dist` : top}/server/${name}.js`);
}
