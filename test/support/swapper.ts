// A real process that swaps a workspace folder with a link, as fast as it can, while a test runs
// something over it (swapper/swap.c), and a look at the descriptors this process holds on a
// folder: the race tests' two halves.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { builtForFile } from './built-once.js';

/**
 * The swapping loop built once for the test file that calls this (in its own temporary folder,
 * removed after the file's tests): call at the top level; the getter gives the program's path
 * once the file's tests run.
 */
export function swapperProgram(): () => string {
  return builtForFile('takeback-swapper-', (dir) => {
    const program = path.join(dir, 'swap');
    execFileSync('cc', ['-O2', '-o', program, path.join(import.meta.dirname, 'swapper', 'swap.c')]);
    return program;
  });
}

/** A running swapping loop between paths `a` and `b` (`program` from {@link swapperProgram}). */
export class Swapper {
  private readonly child: ChildProcess;
  private answers = 0;
  private waiting: (() => void) | null = null;
  constructor(program: string, a: string, b: string) {
    this.child = spawn(program, [a, b], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.answers += d.length;
      this.waiting?.();
    });
  }
  go(): void {
    this.child.stdin!.write('g');
  }
  /** Stops swapping (with both back in place) and resolves once the loop says so. */
  async stop(): Promise<void> {
    const want = this.answers + 1;
    this.child.stdin!.write('s');
    while (this.answers < want) await new Promise<void>((r) => (this.waiting = r));
    this.waiting = null;
  }
  /** Ends the loop (both back in place) and resolves once it has exited. */
  async end(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await exited;
  }
}

/** A descriptor of a process: the path it is open on and its open flags (as /proc/self/fdinfo gives them). */
export interface Held {
  fd: number;
  path: string;
  flags: string;
}

/** The descriptors process `pid` (this one by default) holds open on folder `dir` or anything under it. */
export function heldUnder(dir: string, pid: number | 'self' = 'self'): Held[] {
  return fs.readdirSync(`/proc/${pid}/fd`).flatMap((name) => {
    try {
      const p = fs.readlinkSync(`/proc/${pid}/fd/${name}`);
      if (p !== dir && !p.startsWith(`${dir}/`)) return [];
      const flags = /flags:\s*([0-7]+)/.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${name}`, 'utf8'))?.[1] ?? '?';
      return [{ fd: Number(name), path: p, flags }];
    } catch {
      return [];
    }
  });
}
