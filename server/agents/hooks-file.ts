import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import * as jsoncParser from 'jsonc-parser';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { HTTP_PORT_VAR } from '../daemon/http-address.js';
import type { AgentSpec, HookEntry, HookPlace } from './spec.js';

/*
 * The hooks in an agent's JSON settings file (Claude Code's `.claude/settings.json`, Codex's
 * `hooks.json`, Gemini CLI's `.gemini/settings.json`: all three hold `{"hooks": {EVENT: [{matcher,
 * hooks: [entry]}]}}`): merged in and taken out again without touching anything else.
 */

interface HookGroup {
  matcher?: string;
  hooks?: HookEntry[];
  [k: string]: unknown;
}
type Settings = { hooks?: Record<string, HookGroup[]>; [k: string]: unknown };
type AnySpec = AgentSpec<{ hook_event_name: string }>;

/**
 * The marker by which takeback recognises the hook entries it added for `agent`: a command that
 * runs `takeback … hook <agent>`, or an http hook to `…/takeback/hook/<agent>` (`init --http`).
 */
function isOurs(h: HookEntry, agent: string): boolean {
  if (h.type === 'http') return typeof h.url === 'string' && h.url.endsWith(`/takeback/hook/${agent}`);
  return typeof h.command === 'string' && h.command.includes(`hook ${agent}`) && h.command.includes('takeback');
}

/**
 * takeback's hook entries for `spec` in the settings file `file`, with where each is (none when
 * the file is missing or not JSON; JSON with comments where the agent reads it so). Never throws.
 */
export function ourHookPlaces(spec: AnySpec, file: string): HookPlace[] {
  try {
    const text = readFileSync(file, 'utf8');
    const s = (spec.settingsFile.jsonc ? jsoncParser.parse(text, [], { allowTrailingComma: true }) : JSON.parse(text)) as Settings;
    const out: HookPlace[] = [];
    for (const [event, groups] of Object.entries(s?.hooks ?? {})) {
      if (!Array.isArray(groups)) continue;
      groups.forEach((g, group) => (Array.isArray(g?.hooks) ? g.hooks : []).forEach((hook, index) => isOurs(hook, spec.name) && out.push({ event, group, index, hook })));
    }
    return out;
  } catch {
    return [];
  }
}

/** takeback's hook entries for `spec` in the settings file `file` (see {@link ourHookPlaces}). Never throws. */
export function ourHooksIn(spec: AnySpec, file: string): HookEntry[] {
  return ourHookPlaces(spec, file).map((p) => p.hook);
}

/** `command` without the variable assignments in it (`NAME=value `), which change what a hook is told, not what it runs. */
function withoutAssignments(command: string): string {
  return command.replace(/(?<=^|[\s;])[A-Za-z_][A-Za-z0-9_]*=\S* /g, '');
}

/**
 * True when hook entry `h` (one of takeback's) runs the command `init` writes now for `spec`
 * (`command`: see hook-command.ts), whatever variables are put before it (`init --http`'s port,
 * a user's own): it holds that command whole. An http hook is not a command: true.
 */
export function isCurrentHook(spec: AnySpec, h: HookEntry, command: string): boolean {
  if (h.type === 'http') return true;
  return typeof h.command === 'string' && withoutAssignments(h.command).includes(withoutAssignments(command));
}

/**
 * The folder above which `init --remove` deletes nothing of `spec`'s settings file: the workspace
 * for the project's file, the first part of the user's path (the home folder, or the agent's
 * `*_HOME`) with `user`.
 */
export function settingsBase(spec: AnySpec, workspace: string, user: boolean, env: NodeJS.ProcessEnv = process.env): string {
  return user ? spec.settingsFile.user(env, env.HOME ?? homedir())[0]! : workspace;
}

/** Where `spec`'s settings file is: the project's (under `workspace`), or the user's with `user`. */
export function settingsPath(spec: AnySpec, workspace: string, user: boolean, env: NodeJS.ProcessEnv = process.env): string {
  return user ? join(...spec.settingsFile.user(env, env.HOME ?? homedir())) : join(workspace, ...spec.settingsFile.project);
}

/**
 * Adds `spec`'s hooks to settings `s` (returns a new object), leaving every other hook and setting
 * as it was. An event that already has our hook keeps it, with its command set to `command`, so
 * running it twice changes nothing and running it from another install repairs it. With
 * `entries`, or when `s` holds the hooks of `init --http`, takeback's hooks are replaced whole
 * (see replaceHooks).
 */
export function addHooks(spec: AnySpec, s: Settings, command: string, entries?: (event: string) => HookEntry[]): Settings {
  if (entries) return replaceHooks(spec, s, entries);
  // Hooks of `init --http` there (http hooks and the commands beside them): replaced as a whole.
  const httpMode = Object.values(s.hooks ?? {}).some((groups) =>
    groups.some((g) => (g.hooks ?? []).some((h) => isOurs(h, spec.name) && (h.type === 'http' || String(h.command).includes(`${HTTP_PORT_VAR}=`)))),
  );
  if (httpMode) return replaceHooks(spec, s, () => [spec.hookEntry(command)]);
  const out: Settings = structuredClone(s);
  const hooks = (out.hooks ??= {});
  for (const { event, matcher } of spec.events) {
    const groups = (hooks[event] ??= []);
    const ours = groups.flatMap((g) => (g.hooks ?? []).filter((h) => isOurs(h, spec.name)));
    if (ours.length > 0) {
      // Already there: point it at this install if it names another (a takeback since removed
      // from PATH leaves hooks that cannot start).
      // A command the user edited around ours (`TAKEBACK_HOME=/x <ours>`) is theirs: kept.
      const want = spec.hookEntry(command).command!;
      // Compared without the variables the command begins with (`NODE_EXTRA_CA_CERTS= `, see
      // cli/self.ts): a hook without them still runs this install, and is left as it is.
      const core = command.replace(/^([A-Za-z_][A-Za-z0-9_]*=\S* )+/, '');
      for (const h of ours) if (!h.command!.includes(core)) h.command = want;
      continue;
    }
    const group: HookGroup = matcher ? { matcher, hooks: [] } : { hooks: [] };
    group.hooks!.push(spec.hookEntry(command));
    groups.push(group);
  }
  return out;
}

/**
 * Settings `s` with takeback's hooks for `spec` replaced by `entries(event)` for each event, in
 * one group per event (with its matcher) at the end of the event's list. Running it twice with
 * the same entries changes nothing.
 */
function replaceHooks(spec: AnySpec, s: Settings, entries: (event: string) => HookEntry[]): Settings {
  const out = removeHooks(spec, s);
  const hooks = (out.hooks ??= {});
  for (const { event, matcher } of spec.events) {
    const want = entries(event);
    if (want.length > 0) (hooks[event] ??= []).push(matcher ? { matcher, hooks: want } : { hooks: want });
  }
  return out;
}

/** Takes out exactly the hook entries takeback added for `spec` (and the groups and events left empty by that). */
export function removeHooks(spec: AnySpec, s: Settings): Settings {
  const out: Settings = structuredClone(s);
  if (!out.hooks) return out;
  let touched = false;
  for (const event of Object.keys(out.hooks)) {
    const groups: HookGroup[] = [];
    let ours = false;
    for (const g of out.hooks[event]!) {
      if (!(g.hooks ?? []).some((h) => isOurs(h, spec.name))) {
        groups.push(g);
        continue;
      }
      ours = true;
      const rest = (g.hooks ?? []).filter((h) => !isOurs(h, spec.name));
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

/** Refuses (`usage`) settings whose `hooks` is not `{EVENT: [{hooks: [...]}]}`: nothing there is touched. */
function checkHooksShape(file: string, s: Settings): void {
  const bad = () => new TakebackError('usage', `the "hooks" in ${file} are not {"EVENT": [{"hooks": [...]}]}; fix them first, nothing was changed`);
  if (s.hooks === undefined) return;
  if (typeof s.hooks !== 'object' || s.hooks === null || Array.isArray(s.hooks)) throw bad();
  for (const groups of Object.values(s.hooks)) {
    if (!Array.isArray(groups)) throw bad();
    for (const g of groups as unknown[]) {
      if (typeof g !== 'object' || g === null || Array.isArray(g)) throw bad();
      const hooks = (g as HookGroup).hooks;
      if (hooks !== undefined && (!Array.isArray(hooks) || hooks.some((h) => typeof h !== 'object' || h === null))) throw bad();
    }
  }
}

/** `text` (JSON with comments) with its top-level `hooks` member set to `hooks` (removed when undefined); the rest as it was. */
function rewriteHooksMember(text: string, hooks: Settings['hooks']): string {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  const edits = jsoncParser.modify(text, ['hooks'], hooks, {
    formattingOptions: { insertSpaces: !indent.includes('\t'), tabSize: indent.includes('\t') ? 1 : indent.length, eol: text.includes('\r\n') ? '\r\n' : '\n' },
  });
  return jsoncParser.applyEdits(text, edits);
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
 * Merges `spec`'s hooks into (or with `remove`, out of) the agent's settings file `file`. Keeps the
 * file's other content; writes atomically; a file that is not valid JSON is refused (`usage`)
 * and left untouched. With `entries`, takeback's hooks of each event become exactly those
 * entries (the http hooks of `init --http`); without, each event gets `spec.hookEntry(command)`.
 * Returns what happened.
 */
export function initAgentHooks(
  spec: AnySpec,
  opts: { file: string; command: string; remove?: boolean; entries?: (event: string) => HookEntry[]; base?: string },
): { file: string; changed: boolean } {
  let current: Settings = {};
  let text = '';
  /** The file has comments or trailing commas, which the agent accepts (Gemini CLI: JSONC). */
  let jsonc = false;
  if (existsSync(opts.file)) {
    text = readFileSync(opts.file, 'utf8');
    if (text.trim() !== '') {
      try {
        current = JSON.parse(text) as Settings;
      } catch (e) {
        const errors: jsoncParser.ParseError[] = [];
        const parsed: unknown = spec.settingsFile.jsonc ? jsoncParser.parse(text, errors, { allowTrailingComma: true }) : undefined;
        if (!spec.settingsFile.jsonc || errors.length > 0) {
          throw new TakebackError('usage', `${opts.file} is not valid JSON (${(e as Error).message}); fix it first, nothing was changed`);
        }
        current = parsed as Settings;
        jsonc = true;
      }
      if (typeof current !== 'object' || current === null || Array.isArray(current)) {
        throw new TakebackError('usage', `${opts.file} does not hold a JSON object; nothing was changed`);
      }
      checkHooksShape(opts.file, current);
    }
  }
  const next = opts.remove ? removeHooks(spec, current) : addHooks(spec, current, opts.command, opts.entries);
  // What init made and nothing else: a file left an empty object by taking our hooks out (or
  // holding only what the agent writes there of itself) goes, and so do the folders that held only it.
  const agentMembers = spec.settingsFile.agentMembers ?? [];
  const empty = Object.keys(next).every((k) => agentMembers.includes(k));
  if (opts.remove && spec.settingsFile.dropEmpty && empty && JSON.stringify(next) !== JSON.stringify(current)) {
    unlinkSync(opts.file);
    if (opts.base) removeEmptyFolders(dirname(opts.file), opts.base);
    return { file: opts.file, changed: true };
  }
  // With comments, only the `hooks` member is rewritten, and the rest of the text stays as it is.
  const out = jsonc ? rewriteHooksMember(text, next.hooks) : formatLike(text, next);
  if (out === text || (opts.remove && !existsSync(opts.file)) || JSON.stringify(next) === JSON.stringify(current)) {
    return { file: opts.file, changed: false };
  }
  mkdirSync(dirname(opts.file), { recursive: true });
  writeFileAtomic.sync(opts.file, out);
  return { file: opts.file, changed: true };
}

/** Removes `dir` and the folders above it while they are empty, stopping below `base` (never `base` itself, nor anything outside it). */
export function removeEmptyFolders(dir: string, base: string): void {
  for (let d = dir; ; d = dirname(d)) {
    const rel = relative(base, d);
    if (rel === '' || rel.startsWith('..') || d === dirname(d)) return;
    try {
      if (readdirSync(d).length > 0) return;
      rmdirSync(d);
    } catch {
      return;
    }
  }
}
