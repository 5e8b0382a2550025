import { createRequire } from 'node:module';

// `require`, not `import`, for node:fs: see core/package-info.ts (the hook's forwarding client loads this).
const { readFileSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** The whole of stdin as UTF-8 text ('' when it cannot be read): an agent's hook event. */
export function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}
