// `takeback init helix`: merges takeback's language server into a Helix languages.toml.
//
// Most cases run against a stand-in `hx` (a small node script printing --health output shaped as
// Helix 25.07 prints it, for made-up languages), so they are fast and exact. The last block runs
// the real Helix (test/support/editors.ts; skipped when it is not found unless
// TAKEBACK_REQUIRE_EDITORS=1): every language it knows gets an entry, and Helix itself reads the
// result back with takeback among each language's servers.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { findHelix, missingEditorMessage } from './support/editors.js';
import { BIN, REPO_ROOT, cleanEnv, tb } from './support/takeback.js';

const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';
const dirs: string[] = [];
afterAll(() => {
  if (!process.env.TAKEBACK_KEEP_TMP) for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(label: string): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `takeback-${label}-`)));
  dirs.push(d);
  return d;
}

// ------------------------------------------------------------------------------------------------
// A stand-in Helix

/** Made-up languages (sorted, as Helix sorts them) and their servers. */
const FAKE_LANGS: [string, string[]][] = [
  ['alpha', ['alpha-ls']],
  ['beta-language', ['beta-language-server', 'beta-lint']],
  ['c', ['clangd-ish']],
  ['gamma', []],
  ['kappa1', ['k']],
  ['kappa10', []],
  ['rust', ['rust-analyzer']],
];

/** `hx --health all-languages` as Helix 25.07 prints it to a pipe (80 columns, 9 of them). */
function fakeTable(): string {
  const width = Math.floor(80 / 9);
  const fit = (s: string) => {
    const b = Buffer.from(s);
    const cut = b.length >= width - 2 ? b.subarray(0, width - 2).toString() : null;
    // Helix cuts at a byte index and keeps the whole text when that is not a character boundary.
    const shown = cut !== null && Buffer.from(cut).length === width - 2 && !cut.endsWith('\uFFFD') ? `${cut}…` : s;
    return shown + ' '.repeat(Math.max(0, width - [...shown].length));
  };
  let out = ['Language', 'Language servers', 'Debug adapter', 'Formatter', 'Highlight', 'Textobject', 'Indent', 'Tags', 'Rainbow'].map(fit).join('') + '\n';
  for (const [name, servers] of FAKE_LANGS) {
    out += fit(name) + fit(servers[0] ? `✘ ${servers[0]}` : 'None') + fit('None') + fit('None') + ['✓', '✘', '✘', '✘', '✘'].map(fit).join('') + '\n';
    for (const s of servers.slice(1)) out += fit('') + fit(`✘ ${s}`) + '\n';
  }
  return out;
}

function fakeLanguage(name: string): string {
  const lang = FAKE_LANGS.find(([n]) => n === name);
  if (!lang) {
    const same = FAKE_LANGS.filter(([n]) => n.startsWith(name[0]!)).map(([n]) => n);
    return `\x1b[0;31mLanguage '${name}' not found\x1b[m\n${same.length ? `Did you mean one of these: ${same.join(', ')} ?\n` : ''}`;
  }
  const servers = lang[1].length
    ? `Configured language servers:\n${lang[1].map((s) => `  ✘ ${s}: '${s}-bin' not found in $PATH\n`).join('')}`
    : 'Configured language servers: None\n';
  return `${servers}Configured debug adapter: None\nConfigured formatter: None\nTree-sitter parser: None\nHighlight queries: ✓\n`;
}

/** A folder holding an executable `hx` that answers --version and --health like Helix 25.07. */
function fakeHelix(): string {
  const dir = tmp('fake-hx');
  const data = path.join(dir, 'data.json');
  const answers: Record<string, string> = { 'all-languages': fakeTable() };
  for (const [n] of FAKE_LANGS) answers[n] = fakeLanguage(n);
  for (const c of new Set(FAKE_LANGS.map(([n]) => n[0]!))) answers[`${c}~takeback-probe`] = fakeLanguage(`${c}~takeback-probe`);
  fs.writeFileSync(data, JSON.stringify(answers));
  const hx = path.join(dir, 'hx');
  fs.writeFileSync(
    hx,
    `#!${process.execPath}
const [flag, arg] = process.argv.slice(2);
if (flag === '--version') { console.log('helix 99.01.0 (fake)'); process.exit(0); }
const answers = JSON.parse(require('fs').readFileSync(${JSON.stringify(data)}, 'utf8'));
if (flag === '--health' && answers[arg] !== undefined) { process.stdout.write(answers[arg]); process.exit(0); }
process.stderr.write('fake hx: unexpected ' + process.argv.slice(2).join(' ') + '\\n');
process.exit(1);
`,
    { mode: 0o755 },
  );
  return hx;
}

const hxFake = fakeHelix();

/** A private HOME/XDG_CONFIG_HOME with `text` (or nothing, for null) as Helix's languages.toml. */
function setup(text: string | null) {
  const base = tmp('helix-init');
  const home = path.join(base, 'home');
  const config = path.join(base, 'config');
  fs.mkdirSync(path.join(config, 'helix'), { recursive: true });
  fs.mkdirSync(home);
  const file = path.join(config, 'helix', 'languages.toml');
  if (text !== null) fs.writeFileSync(file, text);
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: config, TAKEBACK_HOME: path.join(base, 'tb') });
  const init = (...args: string[]) => tb(['init', 'helix', '--hx', hxFake, '--command', 'takeback', ...args], { cwd: base, env });
  const read = () => fs.readFileSync(file, 'utf8');
  return { base, file, env, init, read };
}

/** Runs init and returns its exit code, failing with its stderr when it is not 0. */
function okInit(s: ReturnType<typeof setup>, ...args: string[]): number {
  const r = s.init(...args);
  expect(r.code, r.stderr).toBe(0);
  return r.code!;
}

/** What takeback's block sets, parsed: `[language-server.takeback]` and each `[[language]]`'s servers. */
function blockOf(text: string) {
  const start = text.indexOf('# >>> takeback');
  const end = text.indexOf('# <<< takeback <<<');
  expect(start, 'begin marker').toBeGreaterThanOrEqual(0);
  expect(end, 'end marker').toBeGreaterThan(start);
  const parsed = parse(text.slice(start, end)) as any;
  const langs: Record<string, unknown[]> = {};
  for (const l of parsed.language ?? []) langs[l.name] = l['language-servers'];
  return { server: parsed['language-server']?.takeback, langs };
}

const USER = `# my Helix languages
use-grammars = { only = ["rust", "c"] }

[[language]]
name = "rust"   # keep this comment
auto-format = true
language-servers = [ "rust-analyzer", { name = "my-lint", only-features = ["diagnostics"] } ]

[[language]]
name = "c"
indent = { tab-width = 8, unit = "\\t" }

[[language]]
name = "mylang"
scope = "source.mylang"
file-types = ["myl"]

[language-server.my-lint]
command = "my-lint"
args = ["--lsp"]
`;

describe('takeback init helix (stand-in Helix)', () => {
  it('merges into an existing languages.toml: the user text stays byte for byte, their lists keep their servers', () => {
    const s = setup(USER);
    const r = s.init();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`added takeback to ${s.file} (beside the servers of 8 languages)\n`);
    const text = s.read();
    expect(text.startsWith(USER), 'the user text is untouched').toBe(true);
    expect(text.slice(USER.length)).toMatch(/^\n# >>> takeback >>>\n/);
    expect(text.endsWith('# <<< takeback <<<\n')).toBe(true);

    const { server, langs } = blockOf(text);
    expect(server).toEqual({ command: 'takeback', args: ['serve'] });
    expect(langs).toEqual({
      alpha: ['alpha-ls', 'takeback'],
      // Cut to "beta-l…" in the table, the full name and both servers come from Helix's other answers.
      'beta-language': ['beta-language-server', 'beta-lint', 'takeback'],
      // The user's c entry sets no servers: Helix's defaults, again.
      c: ['clangd-ish', 'takeback'],
      gamma: ['takeback'],
      kappa1: ['k', 'takeback'],
      kappa10: ['takeback'],
      // The user's own list, table entries included, plus ours.
      rust: ['rust-analyzer', { name: 'my-lint', 'only-features': ['diagnostics'] }, 'takeback'],
      // A language only the user defines gets takeback too.
      mylang: ['takeback'],
    });
    // The whole file is valid TOML, with the user's settings as they were.
    const all = parse(text) as any;
    expect(all['use-grammars']).toEqual({ only: ['rust', 'c'] });
    expect(all['language-server']['my-lint']).toEqual({ command: 'my-lint', args: ['--lsp'] });
  });

  it('twice is a no-op: the same bytes, and says so', () => {
    const s = setup(USER);
    expect(okInit(s)).toBe(0);
    const once = s.read();
    const mtime = fs.statSync(s.file).mtimeMs;
    const r = s.init();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`nothing to change in ${s.file}\n`);
    expect(s.read()).toBe(once);
    expect(fs.statSync(s.file).mtimeMs).toBe(mtime);
  });

  it('--remove gives back the original bytes (with and without a final newline, CRLF too)', () => {
    for (const original of [USER, USER.trimEnd(), '', '# only a comment', USER.replace(/\n/g, '\r\n')]) {
      const s = setup(original);
      expect(okInit(s)).toBe(0);
      expect(s.read()).not.toBe(original);
      expect(() => parse(s.read())).not.toThrow();
      const r = s.init('--remove');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`removed takeback from ${s.file}\n`);
      expect(s.read(), JSON.stringify(original.slice(0, 20))).toBe(original);
      expect(s.init('--remove').stdout).toBe(`nothing to change in ${s.file}\n`);
    }
  });

  it('creates the file when there is none, and --remove deletes it again', () => {
    const s = setup(null);
    expect(okInit(s)).toBe(0);
    expect(s.read()).toMatch(/^# >>> takeback \(new file\) >>>\n/);
    expect(okInit(s, '--remove')).toBe(0);
    expect(fs.existsSync(s.file)).toBe(false);
  });

  it('keeps what the user writes after the block, and follows their later changes when run again', () => {
    const s = setup(USER);
    expect(okInit(s)).toBe(0);
    const tail = '\n[[language]]\nname = "alpha"\nlanguage-servers = ["alpha-ls", "alpha-extra"]\n';
    fs.appendFileSync(s.file, tail);
    expect(okInit(s)).toBe(0);
    const text = s.read();
    expect(text.endsWith(tail)).toBe(true);
    expect(blockOf(text).langs.alpha).toEqual(['alpha-ls', 'alpha-extra', 'takeback']);
    expect(okInit(s, '--remove')).toBe(0);
    expect(s.read()).toBe(USER + tail);
  });

  it("leaves the user's own takeback server and lists that already name it alone", () => {
    const mine = '[language-server.takeback]\ncommand = "/opt/takeback/bin/takeback"\nargs = ["serve"]\n\n[[language]]\nname = "alpha"\nlanguage-servers = ["takeback"]\n';
    const s = setup(mine);
    expect(okInit(s)).toBe(0);
    const { server, langs } = blockOf(s.read());
    expect(server).toBeUndefined();
    expect(langs.alpha).toBeUndefined();
    expect(langs.gamma).toEqual(['takeback']);
    expect((parse(s.read()) as any)['language-server'].takeback.command).toBe('/opt/takeback/bin/takeback');
  });

  it('refuses a file that is not valid TOML (exit 2) and leaves it untouched', () => {
    const bad = '[[language]]\nname = "rust"\nlanguage-servers = ["rust-analyzer"\n';
    const s = setup(bad);
    const before = fs.statSync(s.file);
    for (const args of [[], ['--remove']]) {
      const r = s.init(...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is not valid TOML.*nothing was changed/);
      expect(r.stdout).toBe('');
    }
    expect(s.read()).toBe(bad);
    expect(fs.statSync(s.file).mtimeMs).toBe(before.mtimeMs);
  });

  it('refuses (exit 2, untouched) a file whose result would not be TOML: an inline language-server table', () => {
    const inline = 'language-server = { my-ls = { command = "my-ls" } }\n';
    const s = setup(inline);
    const r = s.init();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/would not be valid TOML/);
    expect(s.read()).toBe(inline);
  });

  it('--config-dir names the folder; --remove needs no Helix', () => {
    const s = setup(null);
    const dir = path.join(s.base, 'elsewhere');
    let r = tb(['init', 'helix', '--config-dir', dir, '--hx', hxFake], { cwd: s.base, env: s.env });
    expect(r.code, r.stderr).toBe(0);
    const file = path.join(dir, 'languages.toml');
    // Not on PATH as this install: Helix starts this node with this script.
    expect(blockOf(fs.readFileSync(file, 'utf8')).server).toEqual({ command: process.execPath, args: [BIN, 'serve'] });
    r = tb(['init', 'helix', '--remove', '--config-dir', dir, '--hx', '/nonexistent/hx'], { cwd: s.base, env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(s.file)).toBe(false);
  });

  it('says so when there is no Helix (exit 2), writing nothing', () => {
    const s = setup(USER);
    const r = tb(['init', 'helix'], { cwd: s.base, env: { ...s.env, PATH: path.dirname(process.execPath) } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Helix was not found/);
    expect(s.read()).toBe(USER);
  });
});

// ------------------------------------------------------------------------------------------------
// The real Helix

const hx = findHelix();
const hxMissing = missingEditorMessage('hx');

function skipUnlessHelix(ctx: { skip: (c: boolean, note?: string) => void }): void {
  if (hx) return;
  if (requireEditors) throw new Error(`${hxMissing} (TAKEBACK_REQUIRE_EDITORS=1)`);
  ctx.skip(true, hxMissing);
}

/** `hx --health ARG` with the given config folder, in an empty folder, without colours. */
function health(config: string, home: string, arg: string) {
  const cwd = tmp('hx-cwd');
  return spawnSync(hx!, ['--health', arg], {
    cwd,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: config, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

function serversIn(out: string): string[] {
  return [...out.matchAll(/^\s+[✓✘] (.+?): /gm)].map((m) => m[1]!);
}

describe(`takeback init helix with the real Helix (${hx ?? hxMissing})`, () => {
  it('adds takeback beside the default servers of every language Helix knows, and Helix reads it back', (ctx) => {
    skipUnlessHelix(ctx);
    const mine = '[[language]]\nname = "rust"\nlanguage-servers = ["my-rust-ls"]\n\n[language-server.my-rust-ls]\ncommand = "my-rust-ls"\n';
    const s = setup(mine);
    const r = tb(['init', 'helix', '--hx', hx!, '--command', 'takeback'], { cwd: s.base, env: s.env, timeout: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const { langs, server } = blockOf(s.read());
    expect(server).toEqual({ command: 'takeback', args: ['serve'] });

    // Every language of Helix's own table (asked with an empty config) has an entry.
    const empty = tmp('hx-empty');
    const table = health(path.join(empty, 'config'), empty, 'all-languages');
    expect(table.status).toBe(0);
    const rows = table.stdout.split('\n').slice(1).filter((l) => /^\S/.test(l));
    expect(rows.length).toBeGreaterThan(100);
    expect(Object.keys(langs)).toHaveLength(rows.length);
    expect(langs.rust).toEqual(['my-rust-ls', 'takeback']);

    // Helix reads the file without complaint, and lists takeback after each language's defaults.
    const config = path.join(s.base, 'config');
    for (const lang of ['python', 'c-sharp', 'markdown', 'yaml', 'rust']) {
      const mine = health(config, path.join(s.base, 'home'), lang);
      expect(mine.stderr, lang).not.toMatch(/Error parsing/);
      const defaults = lang === 'rust' ? ['my-rust-ls'] : serversIn(health(path.join(empty, 'config'), empty, lang).stdout);
      expect(serversIn(mine.stdout), lang).toEqual([...defaults, 'takeback']);
      expect(langs[lang], lang).toEqual([...defaults, 'takeback']);
    }
    const all = health(config, path.join(s.base, 'home'), 'all-languages');
    expect(all.stderr).not.toMatch(/Error parsing/);

    expect(okInit(s, '--remove')).toBe(0);
    expect(s.read()).toBe(mine);
  });

  it('clients/helix/languages.toml is what scripts/gen-helix-snippet.mjs makes from this Helix', (ctx) => {
    skipUnlessHelix(ctx);
    const committed = fs.readFileSync(path.join(REPO_ROOT, 'clients', 'helix', 'languages.toml'), 'utf8');
    const version = spawnSync(hx!, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0]!.trim();
    if (!committed.includes(`languages of ${version},`)) {
      ctx.skip(true, `the snippet was made from another Helix than ${version}`);
      return;
    }
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'gen-helix-snippet.mjs'), '--hx', hx!, '--check'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    // Pasted by hand into an empty languages.toml, Helix accepts it.
    const base = tmp('hx-snippet');
    fs.mkdirSync(path.join(base, 'config', 'helix'), { recursive: true });
    fs.writeFileSync(path.join(base, 'config', 'helix', 'languages.toml'), committed);
    const mine = health(path.join(base, 'config'), base, 'python');
    expect(mine.stderr).not.toMatch(/Error parsing/);
    expect(serversIn(mine.stdout).at(-1)).toBe('takeback');
  });
});
