// Stopping a real takeback process at an exact point (pause/pause.c, preloaded): right after the
// rename that puts an undo's transaction record in place, between its plan and its first write
// to the workspace. The test acts there (the person saves a file, a kill -9), then lets it go on.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { onTestFinished } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { builtForFile } from './built-once.js';
import { until } from './procs.js';

/** Builds the preloaded library into `dir` with the system's C compiler; returns its path. */
export function buildPause(dir: string): string {
  const out = path.join(dir, 'pause.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O1', '-o', out, path.join(import.meta.dirname, 'pause', 'pause.c'), '-ldl', '-lpthread']);
  return out;
}

/** The environment that stops a process the `nth` time it renames something to a name containing `at`. */
export function pauseEnv(so: string, at: string, nth = 1): NodeJS.ProcessEnv {
  return { LD_PRELOAD: so, PAUSE_RENAME: at, PAUSE_NTH: String(nth) };
}

/** The environment that stops a process just before the `nth` fsync or fdatasync of a file whose path contains `at`. */
export function pauseSyncEnv(so: string, at: string, nth = 1): NodeJS.ProcessEnv {
  return { LD_PRELOAD: so, PAUSE_FSYNC: at, PAUSE_NTH: String(nth) };
}

/** The new name of an undo's or redo's transaction record (journal/txns.ts): written after the plan, before the first write. */
export const TXN_RECORD = '/txn-';

/** True when process `pid` is stopped (its state in /proc is T). */
export function stopped(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  } catch {
    return false;
  }
}

/** Waits (generously: a loaded machine is slow) until `child` has stopped itself; throws if it exits first. */
export async function untilStopped(child: ChildProcess, ms = 60_000): Promise<void> {
  await until(`pid ${child.pid} to stop`, () => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`pid ${child.pid} exited (${child.exitCode ?? child.signalCode}) before stopping`);
    return stopped(child.pid!);
  }, ms);
}

/**
 * The preloaded library built once for the test file that calls this (in its own temporary
 * folder, removed after the file's tests): call at the top level; the getter gives its path once
 * the file's tests run.
 */
export function pauseLibrary(): () => string {
  return builtForFile('takeback-pause-', buildPause);
}

/**
 * `node <bin> ...args` in `cwd` with `env`, stopped where `env` says (see {@link pauseEnv}):
 * resolves once it has stopped itself, with the process (killed when the test ends), what it
 * printed so far and later (`out()`, stdout and stderr together) and its exit code to come.
 */
export async function stoppedRun(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; out: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  await untilStopped(child);
  return { child, out: () => out, exited };
}
