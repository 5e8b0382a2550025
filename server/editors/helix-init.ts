// `takeback init helix`: adds the sidecar to the user's Helix languages.toml.
//
// Helix has no global language server: a server runs only for the languages whose
// `language-servers` list names it, and a user's `[[language]]` entry that sets the list replaces
// the built-in one (Helix merges the user's file into its defaults by language name, replacing
// arrays). So takeback lists, for every language Helix knows, that language's servers again plus
// "takeback".
//
// Where the languages come from: the installed Helix, at run time. Its languages.toml is compiled
// into the binary, so we ask `hx --health` with an empty private config (private HOME and
// XDG_CONFIG_HOME, run in an empty folder so no workspace `.helix/languages.toml` applies):
//   1. `hx --health all-languages` prints a table with one row per language (names may be cut to
//      the column width, with "…") and "None" in the second column when it has no server;
//   2. `hx --health <x>~` for a name that is not a language prints "Did you mean one of these: a,
//      b, ... ?", every language starting with that first character: the full names, checked
//      against the table's rows;
//   3. `hx --health <language>` lists "Configured language servers:" one per line as
//      `  ✓ name: /path` or `  ✘ name: 'cmd' not found in $PATH`: the server names, in order.
// Helix's feature filters on a default server (`except-features`, used by a handful of languages)
// are not shown by --health, so they are not carried over.
//
// How the file is edited: everything takeback writes is one block between
// `# >>> takeback >>>` and `# <<< takeback <<<`, appended at the end the first time and replaced in
// place after that. The user's text outside the block is never rewritten, so their formatting and
// comments stay as they are; `--remove` cuts the block (and the one line break put before it)
// out again, giving back the original bytes. A language the user configures themselves gets, in
// our block, their own server list plus "takeback" (Helix applies the later entry): run init
// again after changing such a list, or after upgrading Helix.

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { onPath, takebackOnPathIs } from '../path-lookup.js';
import type { EditorSpec } from './spec.js';

/** The server's name in Helix's config, and the entry we add to each language. */
export const SERVER_NAME = 'takeback';

const BEGIN = '# >>> takeback >>>';
const BEGIN_CREATED = '# >>> takeback (new file) >>>';
const END = '# <<< takeback <<<';

/** One language Helix knows, with its default servers in order. */
export interface HelixLanguage {
  name: string;
  servers: string[];
}

/** What the installed Helix knows: its version line and its languages, sorted by name. */
export interface HelixDefaults {
  version: string;
  languages: HelixLanguage[];
}

/** How Helix should start the sidecar: `command` and `args` of `[language-server.takeback]`. */
export interface ServerCommand {
  command: string;
  args: string[];
}

// ------------------------------------------------------------------------------------------------
// Where things are

/** Helix's languages.toml: `DIR/languages.toml` for `--config-dir DIR`, else in Helix's config folder. */
export function helixLanguagesPath(configDir?: string, env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (configDir) return join(configDir, 'languages.toml');
  if (platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'helix', 'languages.toml');
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'helix', 'languages.toml');
}

/** The first line of `bin --version` when it is Helix's ("helix 25.07.1"), else undefined. */
export function helixVersion(bin: string): string | undefined {
  try {
    const line = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0]?.trim();
    return line && /^helix \d/.test(line) ? line : undefined;
  } catch {
    return undefined;
  }
}

/** The Helix to ask: `explicit` as given, else `hx` or `helix` on PATH that reports itself as Helix. */
export function findHelixBinary(explicit?: string): { bin: string; version: string } {
  if (explicit) {
    if (/[\\/]/.test(explicit)) explicit = resolve(explicit); // asked from another folder below
    const version = helixVersion(explicit);
    if (!version) throw new TakebackError('usage', `${explicit} does not run as Helix (\`${explicit} --version\` should print "helix ...")`);
    return { bin: explicit, version };
  }
  for (const name of ['hx', 'helix']) {
    const bin = onPath(name);
    const version = bin ? helixVersion(bin) : undefined;
    if (bin && version) return { bin, version };
  }
  throw new TakebackError('usage', 'Helix was not found on PATH (as hx or helix); install it, or pass --hx PATH');
}

/**
 * How Helix should start this install's sidecar: `takeback serve` when the `takeback` on PATH is
 * this install, else this node with this script (a clone used without `npm i -g`).
 */
export function helixServerCommand(bin: string, env: NodeJS.ProcessEnv = process.env): ServerCommand {
  return takebackOnPathIs(bin, env) ? { command: 'takeback', args: ['serve'] } : { command: process.execPath, args: [bin, 'serve'] };
}

// ------------------------------------------------------------------------------------------------
// Reading Helix's --health output

const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

function plain(text: string): string {
  return text.replace(ANSI, '').replace(/\r\n/g, '\n');
}

/** One row of `hx --health all-languages`: a language's name and its servers, either maybe cut to the column width. */
export interface HealthRow {
  name: string;
  /** The name ended with "…": it may be cut. */
  cut: boolean;
  /** Server names as shown; undefined when one of them may be cut. */
  servers: string[] | undefined;
  hasServers: boolean;
}

/**
 * Rows of `hx --health all-languages`. Cells are padded to a column width that depends on the
 * terminal (80 columns when there is none) and cut with "…"; a language's further servers are on
 * lines of their own that start with spaces. Names hold no spaces, so words are enough.
 */
export function parseHealthTable(text: string): HealthRow[] {
  const lines = plain(text).split('\n');
  const head = lines.findIndex((l) => /^Lang/.test(l));
  if (head < 0) throw new Error('no table in `hx --health all-languages` output');
  const rows: HealthRow[] = [];
  const server = (row: HealthRow, words: string[]) => {
    if (words[0] !== '✓' && words[0] !== '✘') return;
    row.hasServers = true;
    const name = words[1] ?? '';
    if (!row.servers || name === '' || name.endsWith('…')) row.servers = undefined;
    else row.servers.push(name);
  };
  for (const line of lines.slice(head + 1)) {
    if (line.trim() === '') continue;
    const words = line.trim().split(/\s+/);
    if (/^\s/.test(line)) {
      const row = rows.at(-1);
      if (row) server(row, words);
      continue;
    }
    const first = words[0]!;
    const cut = first.endsWith('…');
    const row: HealthRow = { name: cut ? first.slice(0, -1) : first, cut, servers: [], hasServers: false };
    server(row, words.slice(1));
    rows.push(row);
  }
  return rows;
}

/** The names in `Did you mean one of these: a, b ?` (Helix's answer for a language it does not know). */
export function parseSuggestions(text: string): string[] {
  const m = /Did you mean one of these: (.*) \?\s*$/m.exec(plain(text));
  return m ? m[1]!.split(', ').map((s) => s.trim()).filter(Boolean) : [];
}

/** The server names under `Configured language servers:` of `hx --health <language>`, in order. */
export function parseLanguageServers(text: string): string[] {
  const lines = plain(text).split('\n');
  const at = lines.findIndex((l) => l.startsWith('Configured language servers:'));
  if (at < 0) throw new Error('no "Configured language servers:" line');
  if (/:\s*None\s*$/.test(lines[at]!)) return [];
  const out: string[] = [];
  for (const line of lines.slice(at + 1)) {
    const m = /^\s+[✓✘]\s+(.+?): /.exec(line);
    if (!m) break;
    out.push(m[1]!);
  }
  return out;
}

/** Runs `fn` over `items`, `n` at a time, keeping the order. */
async function pool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

/**
 * The languages the Helix at `bin` knows and their default servers, read from its `--health`
 * output with an empty private configuration (see the top of this file).
 */
export async function helixDefaults(bin: string, version?: string): Promise<HelixDefaults> {
  const scratch = mkdtempSync(join(tmpdir(), 'takeback-hx-'));
  try {
    for (const d of ['home', 'config', 'cwd']) mkdirSync(join(scratch, d));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: join(scratch, 'home'),
      XDG_CONFIG_HOME: join(scratch, 'config'),
      APPDATA: join(scratch, 'config'),
      NO_COLOR: '1',
    };
    const run = (arg: string) =>
      new Promise<string>((resolve, reject) => {
        execFile(bin, ['--health', arg], { cwd: join(scratch, 'cwd'), env, encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout) => {
          if (err) reject(new Error(`${bin} --health ${arg} failed: ${err.message}`));
          else resolve(stdout);
        });
      });

    const rows = parseHealthTable(await run('all-languages'));
    if (rows.length === 0) throw new Error('`hx --health all-languages` listed no language');

    // Names cut to the column width: Helix suggests every language with the same first character.
    const names = new Set<string>();
    const firsts = [...new Set(rows.filter((r) => r.cut).map((r) => [...r.name][0]!))];
    for (const list of await pool(firsts, 8, (c) => run(`${c}~takeback-probe`).then(parseSuggestions))) for (const n of list) names.add(n);
    const full = [...names].sort();
    const taken = new Set(rows.filter((r) => !r.cut).map((r) => r.name));
    const resolved = rows.map((r) => {
      if (!r.cut) return { ...r };
      const match = full.find((n) => n.startsWith(r.name) && !taken.has(n));
      if (!match) throw new Error(`cannot tell the full name of the language shown as "${r.name}…"`);
      taken.add(match);
      return { ...r, name: match };
    });
    for (const n of names) if (!taken.has(n)) throw new Error(`Helix names the language ${n}, which its table does not show`);

    // Server names cut in the table: ask for the language itself.
    const languages = await pool(resolved, 8, async (r) => ({
      name: r.name,
      servers: !r.hasServers ? [] : (r.servers ?? parseLanguageServers(await run(r.name))),
    }));
    languages.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { version: version ?? helixVersion(bin) ?? 'helix', languages };
  } catch (e) {
    if (e instanceof TakebackError) throw e;
    throw new TakebackError('usage', `could not read Helix's languages from ${bin} --health: ${(e as Error).message}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------------
// TOML text

function tomlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

/** A TOML inline value (for the entries of a user's `language-servers`, which may be tables). */
function tomlValue(v: unknown): string {
  if (typeof v === 'string') return tomlString(v);
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  if (v && typeof v === 'object') {
    const parts = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x)}`);
    return parts.length ? `{ ${parts.join(', ')} }` : '{}';
  }
  return tomlString(String(v));
}

// ------------------------------------------------------------------------------------------------
// The block

type Toml = Record<string, unknown>;

function serverName(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object' && typeof (entry as { name?: unknown }).name === 'string') return (entry as { name: string }).name;
  return undefined;
}

/**
 * The `[[language]]` lists takeback writes: for each language (Helix's and the user's own), the
 * user's list when their file sets one (the last one wins, as in Helix), else Helix's default,
 * plus "takeback". Languages that already list "takeback" are left out.
 */
export function languageLists(defaults: HelixDefaults, user: Toml): { name: string; servers: unknown[] }[] {
  const lists = new Map<string, unknown[]>();
  for (const l of defaults.languages) lists.set(l.name, [...l.servers]);
  const userLangs = Array.isArray(user.language) ? (user.language as unknown[]) : [];
  for (const entry of userLangs) {
    if (!entry || typeof entry !== 'object') continue;
    const { name, 'language-servers': servers } = entry as { name?: unknown; 'language-servers'?: unknown };
    if (typeof name !== 'string') continue;
    if (Array.isArray(servers)) lists.set(name, [...servers]);
    else if (!lists.has(name)) lists.set(name, []);
  }
  const out: { name: string; servers: unknown[] }[] = [];
  for (const name of [...lists.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const servers = lists.get(name)!;
    if (servers.some((s) => serverName(s) === SERVER_NAME)) continue;
    out.push({ name, servers: [...servers, SERVER_NAME] });
  }
  return out;
}

/** takeback's block for a languages.toml whose other content is `user` (without eol translation). */
export function renderBlock(opts: { defaults: HelixDefaults; user: Toml; server: ServerCommand; created?: boolean }): string {
  const lines = [
    opts.created ? BEGIN_CREATED : BEGIN,
    `# Written by \`takeback init helix\` from ${opts.defaults.version}; \`takeback init helix --remove\` takes this block out.`,
    '# Helix has no global language server, and a language that sets `language-servers` replaces its',
    '# defaults: so each language below lists its servers again, with "takeback" (the undo sidecar) added.',
    "# Edit outside this block. Run `takeback init helix` again after upgrading Helix or changing a language's servers.",
  ];
  const userServers = opts.user['language-server'];
  const userHasOurs = !!userServers && typeof userServers === 'object' && SERVER_NAME in (userServers as Toml);
  if (!userHasOurs) {
    lines.push('', `[language-server.${SERVER_NAME}]`, `command = ${tomlString(opts.server.command)}`, `args = ${tomlValue(opts.server.args)}`);
  }
  for (const l of languageLists(opts.defaults, opts.user)) {
    lines.push('', '[[language]]', `name = ${tomlString(l.name)}`, `language-servers = ${tomlValue(l.servers)}`);
  }
  lines.push(END);
  return `${lines.join('\n')}\n`;
}

/** Where takeback's block is in `text`: the user's text before and after it, and whether init created the file. */
export function splitBlock(text: string): { before: string; after: string; created: boolean; found: boolean } {
  const begin = /^# >>> takeback( \(new file\))? >>>\r?$/m.exec(text);
  if (!begin) return { before: text, after: '', created: false, found: false };
  const endRe = /^# <<< takeback <<<(\r?\n|$)/gm;
  endRe.lastIndex = begin.index;
  const end = endRe.exec(text);
  if (!end) throw new TakebackError('usage', 'takeback\'s block has a "# >>> takeback >>>" line but no "# <<< takeback <<<" line: fix or remove it by hand first; nothing was changed');
  if (/^# >>> takeback( \(new file\))? >>>\r?$/m.test(text.slice(end.index + end[0].length))) {
    throw new TakebackError('usage', 'the file has more than one takeback block: remove one by hand first; nothing was changed');
  }
  // The block was put after one line break of its own (unless it starts the file).
  let cut = begin.index;
  if (text.slice(0, cut).endsWith('\r\n')) cut -= 2;
  else if (text.slice(0, cut).endsWith('\n')) cut -= 1;
  return { before: text.slice(0, cut), after: text.slice(end.index + end[0].length), created: Boolean(begin[1]), found: true };
}

function parseOrRefuse(file: string, text: string, what: string): Toml {
  try {
    return parseToml(text) as Toml;
  } catch (e) {
    throw new TakebackError('usage', `${file} ${what} (${(e as Error).message.split('\n')[0]}); nothing was changed`);
  }
}

/**
 * Adds takeback's block to (or with `remove`, takes it out of) the Helix languages.toml `file`.
 * A file that is not valid TOML is refused (`usage`) and left untouched; so is one whose result
 * would not be valid TOML (a user who wrote `language-server` or `language` inline). Writing is
 * atomic and only when the bytes change. `defaults` is asked of Helix (`hx`) when not given.
 */
export async function initHelix(opts: {
  file: string;
  server: ServerCommand;
  remove?: boolean;
  hx?: string;
  defaults?: HelixDefaults;
}): Promise<{ file: string; changed: boolean; languages: number }> {
  const exists = existsSync(opts.file);
  const text = exists ? readFileSync(opts.file, 'utf8') : '';
  const { before, after, created, found } = splitBlock(text);
  // The user's part (takeback's own block is written anew).
  const user = parseOrRefuse(opts.file, before + after, found ? "is not valid TOML outside takeback's block" : 'is not valid TOML');

  if (opts.remove) {
    if (!found) return { file: opts.file, changed: false, languages: 0 };
    const rest = before + after;
    if (rest === '' && created) unlinkSync(opts.file);
    else writeFileAtomic.sync(opts.file, rest);
    return { file: opts.file, changed: true, languages: 0 };
  }

  let defaults = opts.defaults;
  if (!defaults) {
    const hx = findHelixBinary(opts.hx);
    defaults = await helixDefaults(hx.bin, hx.version);
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  // "(new file)": --remove deletes the file again when nothing else is left in it.
  let block = renderBlock({ defaults, user, server: opts.server, created: found ? created : !exists });
  if (eol !== '\n') block = block.replace(/\n/g, eol);
  const next = before === '' ? block + after : before + eol + block + after;
  parseOrRefuse(opts.file, next, `would not be valid TOML with takeback's block added (a \`language-server\` or \`language\` written inline cannot be extended)`);
  const languages = languageLists(defaults, user).length;
  if (next === text) return { file: opts.file, changed: false, languages };
  mkdirSync(join(opts.file, '..'), { recursive: true });
  writeFileAtomic.sync(opts.file, next);
  return { file: opts.file, changed: true, languages };
}

/** `takeback init helix [--remove] [--config-dir DIR] [--hx PATH]`: does it and says what happened. */
export async function initHelixCommand(o: { remove?: boolean; configDir?: string; hx?: string; command?: string }, bin: string): Promise<string> {
  const server = o.command ? { command: o.command, args: ['serve'] } : helixServerCommand(bin);
  const r = await initHelix({ file: helixLanguagesPath(o.configDir), server, remove: o.remove, hx: o.hx });
  if (!r.changed) return `nothing to change in ${r.file}\n`;
  return o.remove ? `removed takeback from ${r.file}\n` : `added takeback to ${r.file} (beside the servers of ${r.languages} languages)\n`;
}

/** Helix, for `takeback init helix`. */
export const helix: EditorSpec = { name: 'helix', init: (o, self) => initHelixCommand(o, self.bin) };
