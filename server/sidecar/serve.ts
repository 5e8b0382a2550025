import { format } from 'node:util';
import { takebackHome } from '../core/config.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './framing.js';
import { IdleSweeper } from './idle-sweeper.js';
import { startServer } from './server.js';

/** How often a running sidecar asks whether the retention rules are due (they run every 6 hours). */
const GC_CHECK_MS = 60 * 60 * 1000;

/** TAKEBACK_MAX_MESSAGE_BYTES (a positive whole number of bytes), else the default bound of 64 MiB. */
export function maxMessageBytes(env: NodeJS.ProcessEnv): number {
  const v = env.TAKEBACK_MAX_MESSAGE_BYTES;
  return v && /^[1-9]\d{0,15}$/.test(v.trim()) ? Number(v.trim()) : DEFAULT_MAX_MESSAGE_BYTES;
}

/**
 * `takeback serve`: the sidecar over stdio until the client sends `exit` (or closes stdin, or
 * sends what cannot be framed: the reason goes to stderr). Resolves to the exit code: 0 after
 * `shutdown`, else 1. `settle`: see ServerOptions.settle.
 */
export function serve(opts: { cwd: string; version: string; settle?: () => Promise<unknown> | null }): Promise<number> {
  // stdout carries the protocol: anything printed there by mistake would corrupt it.
  const toStderr = (...args: unknown[]) => {
    process.stderr.write(`${format(...args)}\n`);
  };
  console.log = toStderr;
  console.info = toStderr;
  console.warn = toStderr;
  console.debug = toStderr;
  // Expiry and the blob sweep run at start and every 6 hours (the due time is shared with hooks
  // and other sidecars through gc.json), here, in idle slices that never delay a request.
  const sweeper = new IdleSweeper(takebackHome(), toStderr);
  sweeper.startIfDue();
  setInterval(() => sweeper.startIfDue(), GC_CHECK_MS).unref();
  // However the process ends (exit after shutdown, stdin closed), a sweep under way gives its claim back.
  process.on('exit', () => sweeper.stop());
  return new Promise((resolve) => {
    startServer({
      input: process.stdin,
      output: process.stdout,
      cwd: opts.cwd,
      version: opts.version,
      activity: sweeper,
      settle: opts.settle,
      maxMessageBytes: maxMessageBytes(process.env),
      onInputLost: (reason) => toStderr(reason),
      onExit: (code) => {
        sweeper.stop();
        resolve(code);
        // stdin stays open in the client's hands: leave now rather than wait for it.
        setImmediate(() => process.exit(code));
      },
    });
  });
}
