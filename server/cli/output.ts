import { fstatSync, statSync, writeSync } from 'node:fs';
import { useColor } from './style.js';

/*
 * The command line's output: standard output written straight to fd 1, whether to colour it, and
 * the first scan's progress on stderr.
 */

/** process.stdout, once {@link print} had to fall back on it: everything after goes there too, in order. */
let stdoutStream: NodeJS.WriteStream | null = null;

/**
 * Writes `text` to standard output: straight to fd 1 (`fs.writeSync`), without creating
 * process.stdout, which for a pipe is a net.Socket and costs a short command like `list` a few
 * milliseconds. What fd 1 does not take at once (a non-blocking pipe: EAGAIN) goes through
 * process.stdout, which waits for it. A reader that went away (EPIPE: `takeback list | head`)
 * ends the output quietly.
 */
export function print(text: string): void {
  if (stdoutStream) {
    stdoutStream.write(text);
    return;
  }
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length;) {
    try {
      done += writeSync(1, bytes, done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw e;
      stdoutStream = process.stdout;
      stdoutStream.write(bytes.subarray(done));
      return;
    }
  }
}

/** Whether `st` (a character device) is /dev/null. */
function isDevNull(st: { rdev: number }): boolean {
  try {
    return st.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

/**
 * Whether to colour standard output, as {@link useColor} decides. Only a character device other
 * than /dev/null can be a terminal: for a pipe, a file or /dev/null, process.stdout (which
 * {@link print} avoids) is not created to ask.
 */
export function colorOut(): boolean {
  let device: boolean;
  try {
    const out = fstatSync(1);
    device = out.isCharacterDevice() && !isDevNull(out);
  } catch {
    device = false; // fd 1 closed: no terminal
  }
  return useColor(device ? process.stdout : ({ isTTY: false } as NodeJS.WriteStream));
}

/** Writes `value` as indented JSON and a newline to standard output (see {@link print}). */
export function json(value: unknown): void {
  print(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Progress of a first (cold) scan, which reads every file once, when stderr is a terminal:
 * `takeback: first look at this workspace: 12,000 files` rewritten in place (at most ten times a
 * second, from the scan's call every 1,000 files) and cleared by `done`. Nothing otherwise: a
 * warm scan does not call it, and a script's stderr stays clean.
 */
export function scanProgress(): { onProgress?: (files: number) => void; done(): void } {
  if (!process.stderr.isTTY) return { done() {} };
  let shown = false;
  let last = 0;
  const write = (s: string) => {
    try {
      writeSync(2, s);
    } catch {
      // a terminal gone: nothing to show it on
    }
  };
  return {
    onProgress(files) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      write(`\rtakeback: first look at this workspace: ${files.toLocaleString('en-US')} files`);
    },
    done() {
      if (shown) write('\r\x1b[K');
    },
  };
}
