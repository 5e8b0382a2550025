import { format } from 'node:util';
import { startServer } from './server.js';

/**
 * `takeback serve`: the sidecar over stdio until the client sends `exit` (or closes stdin).
 * Resolves to the exit code: 0 after `shutdown`, else 1.
 */
export function serve(opts: { cwd: string; version: string }): Promise<number> {
  // stdout carries the protocol: anything printed there by mistake would corrupt it.
  const toStderr = (...args: unknown[]) => {
    process.stderr.write(`${format(...args)}\n`);
  };
  console.log = toStderr;
  console.info = toStderr;
  console.warn = toStderr;
  console.debug = toStderr;
  return new Promise((resolve) => {
    startServer({
      input: process.stdin,
      output: process.stdout,
      cwd: opts.cwd,
      version: opts.version,
      onExit: (code) => {
        resolve(code);
        // stdin stays open in the client's hands: leave now rather than wait for it.
        setImmediate(() => process.exit(code));
      },
    });
  });
}
