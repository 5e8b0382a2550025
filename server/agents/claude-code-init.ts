import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { CLAUDE_HOOK_EVENTS } from './claude-code.js';

/** The marker by which takeback recognises the hook entries it added. */
const MARK = 'hook claude-code';

interface HookEntry {
  type: string;
  command?: string;
  timeout?: number;
  [k: string]: unknown;
}
interface HookGroup {
  matcher?: string;
  hooks?: HookEntry[];
  [k: string]: unknown;
}
type Settings = { hooks?: Record<string, HookGroup[]>; [k: string]: unknown };

function isOurs(h: HookEntry): boolean {
  return typeof h.command === 'string' && h.command.includes(MARK) && h.command.includes('takeback');
}

/** Where the settings file is: the project's `.claude/settings.json`, or the user's with `user`. */
export function claudeSettingsPath(workspace: string, user: boolean, env: NodeJS.ProcessEnv = process.env): string {
  return user ? join(env.HOME ?? homedir(), '.claude', 'settings.json') : join(workspace, '.claude', 'settings.json');
}

/**
 * Adds takeback's hooks to Claude Code settings `s` (returns a new object), leaving every other
 * hook and setting as it was. An event that already has our hook keeps it, with its command set to
 * `command`, so running it twice changes nothing and running it from another install repairs it.
 */
export function addHooks(s: Settings, command: string): Settings {
  const out: Settings = structuredClone(s);
  const hooks = (out.hooks ??= {});
  for (const { event, matcher } of CLAUDE_HOOK_EVENTS) {
    const groups = (hooks[event] ??= []);
    const ours = groups.flatMap((g) => (g.hooks ?? []).filter(isOurs));
    if (ours.length > 0) {
      // Already there: point it at this install if it names another (a takeback since removed
      // from PATH leaves hooks that cannot start).
      for (const h of ours) h.command = command;
      continue;
    }
    const group: HookGroup = matcher ? { matcher, hooks: [] } : { hooks: [] };
    group.hooks!.push({ type: 'command', command, timeout: 30 });
    groups.push(group);
  }
  return out;
}

/** Takes out exactly the hook entries takeback added (and the groups and events left empty by that). */
export function removeHooks(s: Settings): Settings {
  const out: Settings = structuredClone(s);
  if (!out.hooks) return out;
  let touched = false;
  for (const event of Object.keys(out.hooks)) {
    const groups: HookGroup[] = [];
    let ours = false;
    for (const g of out.hooks[event]!) {
      if (!(g.hooks ?? []).some(isOurs)) {
        groups.push(g);
        continue;
      }
      ours = true;
      const rest = (g.hooks ?? []).filter((h) => !isOurs(h));
      if (rest.length > 0) groups.push({ ...g, hooks: rest });
    }
    if (!ours) continue;
    touched = true;
    if (groups.length > 0) out.hooks[event] = groups;
    else delete out.hooks[event];
  }
  if (touched && Object.keys(out.hooks).length === 0) delete out.hooks;
  return out;
}

/**
 * `value` as JSON laid out like `text` (the file as it was): its indentation (two spaces for a
 * new file) and whether it ends with a newline, so that `--remove` gives back the very bytes
 * of a file that `init` changed.
 */
function formatLike(text: string, value: unknown): string {
  if (text.trim() === '') return `${JSON.stringify(value, null, 2)}\n`;
  // The first indented line's indentation; a file all on one line stays so (but `{}` grows up).
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? (text.trim().includes('\n') || text.trim() === '{}' ? 2 : 0);
  return JSON.stringify(value, null, indent) + (text.endsWith('\n') ? '\n' : '');
}

/**
 * Merges takeback's hooks into (or with `remove`, out of) a Claude Code settings file. Keeps the
 * file's other content; writes atomically; a file that is not valid JSON is refused (`usage`)
 * and left untouched. Returns what happened.
 */
export function initClaudeCode(opts: { file: string; command: string; remove?: boolean }): { file: string; changed: boolean } {
  let current: Settings = {};
  let text = '';
  if (existsSync(opts.file)) {
    text = readFileSync(opts.file, 'utf8');
    if (text.trim() !== '') {
      try {
        current = JSON.parse(text) as Settings;
      } catch (e) {
        throw new TakebackError('usage', `${opts.file} is not valid JSON (${(e as Error).message}); fix it first, nothing was changed`);
      }
      if (typeof current !== 'object' || current === null || Array.isArray(current)) {
        throw new TakebackError('usage', `${opts.file} does not hold a JSON object; nothing was changed`);
      }
    }
  }
  const next = opts.remove ? removeHooks(current) : addHooks(current, opts.command);
  const out = formatLike(text, next);
  if (out === text || (opts.remove && !existsSync(opts.file)) || JSON.stringify(next) === JSON.stringify(current)) {
    return { file: opts.file, changed: false };
  }
  mkdirSync(dirname(opts.file), { recursive: true });
  writeFileAtomic.sync(opts.file, out);
  return { file: opts.file, changed: true };
}
