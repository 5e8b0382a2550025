import { chmodSync, existsSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { removeEmptyFolders } from './hooks-file.js';
import type { AgentSpec } from './spec.js';

/*
 * The hooks of an agent that runs a program per event, found by the event's name in a hooks
 * folder (Cline CLI: `.cline/hooks/PreToolUse`, or `PreToolUse.sh`, …): one small script of
 * takeback's per event, added beside the user's own programs and taken out again without
 * touching them.
 */

type AnySpec = AgentSpec<{ hook_event_name: string }>;

/** The names a program for `event` may have (Cline runs a file named after the event, bare or with `.sh`); ours takes the first one free. */
function namesFor(event: string): string[] {
  return [event, `${event}.sh`];
}

/** Whether the file at `path` is a program takeback wrote for `spec` (its text runs `takeback … hook <agent>`). */
function isOurs(spec: AnySpec, path: string): boolean {
  try {
    const text = readFileSync(path, 'utf8');
    return text.includes('takeback') && text.includes(`hook ${spec.name}`);
  } catch {
    return false;
  }
}

/**
 * takeback's programs for `spec`'s events in the hooks folder `dir` (see {@link initHookPrograms}):
 * for every event (`all`), some or none; `current` is whether each is the very text `init` writes
 * now for `command` (false for one an older takeback or another install wrote; null when none is
 * there). Reads files only; never throws.
 */
export function ourHookPrograms(spec: AnySpec, dir: string, command: string): { installed: 'all' | 'some' | 'none'; current: boolean | null } {
  const want = spec.hookProgram!(command);
  const texts = spec.events.flatMap(({ event }) => {
    const path = namesFor(event)
      .map((n) => join(dir, n))
      .find((p) => isOurs(spec, p));
    return path ? [readText(path)] : [];
  });
  const installed = texts.length === 0 ? 'none' : texts.length === spec.events.length ? 'all' : 'some';
  return { installed, current: texts.length === 0 ? null : texts.every((t) => t === want) };
}

/** A file's text, or null when it cannot be read. */
function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Writes (or with `remove`, deletes) takeback's program for each of `spec`'s events in the
 * hooks folder `dir`, each running `command` (see `spec.hookProgram`), mode 0755. A program of
 * ours already there is rewritten only when its text differs, so running it twice changes
 * nothing; the user's own programs are left as they are, ours going under the next free name.
 * `remove` deletes ours only, then `dir` and the folders above it that end up empty, up to (not
 * including) `base`. Refuses (`usage`, nothing written) when every name of an event is taken by
 * a program that is not ours. Returns the folder and whether anything changed.
 */
export function initHookPrograms(spec: AnySpec, opts: { dir: string; command: string; remove?: boolean; base: string }): { file: string; changed: boolean } {
  const text = spec.hookProgram!(opts.command);
  let changed = false;
  if (opts.remove) {
    for (const { event } of spec.events)
      for (const name of namesFor(event)) {
        const path = join(opts.dir, name);
        if (isOurs(spec, path)) {
          unlinkSync(path);
          changed = true;
        }
      }
    if (changed) removeEmptyFolders(opts.dir, opts.base);
    return { file: opts.dir, changed };
  }
  // Where each event's program goes, decided before anything is written.
  const plan = spec.events.map(({ event }) => {
    const names = namesFor(event).map((n) => join(opts.dir, n));
    const ours = names.find((p) => isOurs(spec, p));
    const path = ours ?? names.find((p) => !existsSync(p));
    if (!path) throw new TakebackError('usage', `${names.join(' and ')} are programs of your own: takeback's ${event} hook has no name left there; nothing was changed`);
    return path;
  });
  mkdirSync(opts.dir, { recursive: true });
  for (const path of plan) {
    if (existsSync(path) && readFileSync(path, 'utf8') === text) continue;
    writeFileAtomic.sync(path, text, { mode: 0o755 });
    chmodSync(path, 0o755);
    changed = true;
  }
  return { file: opts.dir, changed };
}
