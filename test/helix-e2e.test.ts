// End to end in the real Helix (25.07, from test/support/editors.ts), driven under tmux like a
// person at a terminal: an agent's Edit and `sed -i` changes arrive through the Claude Code hook
// entry point (`takeback hook claude-code`, with the tools really run between PreToolUse and
// PostToolUse), then they are undone from inside Helix:
//   - with the documented key map (clients/helix/config.toml, verbatim) on a file with no language;
//   - with the takeback language server that `takeback init helix` adds to languages.toml: its
//     code actions (space a) undo through Helix's buffers, `:w` puts the disk back byte for byte,
//     `u` brings the agent's change back, a buffer with unsaved later edits on the agent's line is
//     a conflict that stays untouched until "Undo, replacing later changes" is picked, and one
//     with unsaved edits on other lines gets the undo merged into it (nothing written under it,
//     recorded on `:w`); "Undo the agent's change
//     here" takes back only the agent's hunk at the cursor, through the buffer too; a save the
//     person makes in Helix during the agent's turn is theirs ("saved in Helix", outside the
//     turn): it stops the undo of the agent's change alone and the turn's undo never takes it.
// Everything is private: HOME, XDG folders, TAKEBACK_HOME, the tmux server. A test is skipped
// only when Helix cannot be found, and fails instead with TAKEBACK_REQUIRE_EDITORS=1.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { findHelix, missingEditorMessage } from './support/editors.js';
import { claudeAgent, HelixSession, privateEditorEnv, slowFsync, waitFor, writeHelixConfig } from './support/helix.js';
import { BIN, REPO_ROOT, hook, tb } from './support/takeback.js';

const hx = findHelix();
const hxMissing = missingEditorMessage('hx');
const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';
const KEYMAP = fs.readFileSync(path.join(REPO_ROOT, 'clients', 'helix', 'config.toml'), 'utf8');

function needHelix(ctx: { skip: (condition: boolean, note?: string) => void }): void {
  if (hx) return;
  if (requireEditors) throw new Error(`${hxMissing} (TAKEBACK_REQUIRE_EDITORS=1)`);
  ctx.skip(true, hxMissing);
}

/** A private world: a git workspace, TAKEBACK_HOME, HOME/XDG, `takeback` on PATH, a Helix config, a tmux Helix. */
function world(opts: { keymap?: boolean; slowFsync?: { suffix: string; ms: number } } = {}) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-hx-e2e-')));
  const ws = path.join(base, 'ws');
  const bin = path.join(base, 'bin');
  fs.mkdirSync(ws);
  fs.mkdirSync(bin);
  // `takeback` on PATH is this install, as after `npm i -g`: init writes `command = "takeback"`.
  fs.symlinkSync(BIN, path.join(bin, 'takeback'));
  const env = privateEditorEnv(base, { TAKEBACK_HOME: path.join(base, 'tb'), LANG: 'C.UTF-8' });
  env.PATH = [bin, env.PATH].join(path.delimiter);
  execFileSync('git', ['init', '-q', ws], { env });
  const config = path.join(base, 'config.toml');
  writeHelixConfig(config, opts.keymap ? `\n${KEYMAP}` : '');
  // Helix alone (and what it starts) gets the pause: the agent's hooks and the command line run as they are.
  const helix = new HelixSession(hx!, base, opts.slowFsync ? { ...env, ...slowFsync(base, opts.slowFsync.suffix, opts.slowFsync.ms) } : env);
  onTestFinished(() => {
    helix.stop();
    if (!process.env.TAKEBACK_KEEP_TMP) fs.rmSync(base, { recursive: true, force: true });
  });
  const agent = claudeAgent(ws, env, (event, o) => hook(event, o));
  const read = (rel: string) => fs.readFileSync(path.join(ws, rel), 'utf8');
  const write = (rel: string, text: string) => fs.writeFileSync(path.join(ws, rel), text);
  const takeback = (...args: string[]) => tb(args, { cwd: ws, env });
  // Helix saves through a backup and a rename: the file can be missing for a moment.
  const readNow = (rel: string) => {
    try {
      return read(rel);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null; // between the backup and the rename
      throw e;
    }
  };
  /** Waits until the file on disk holds exactly `text`. */
  const disk = (rel: string, text: string, what: string) =>
    waitFor(`${rel} on disk: ${what}`, () => readNow(rel) === text, 10_000, () => `on disk: ${JSON.stringify(readNow(rel))}\nwanted: ${JSON.stringify(text)}\nscreen:\n${helix.screen()}`);
  const open = (file: string) => helix.start(ws, ['-c', config, file]);
  return { base, ws, env, helix, agent, read, write, takeback, disk, open };
}

/**
 * `takeback init helix` in a world's private config. The first call runs the real command; the
 * result depends only on the Helix asked and on `takeback` being on PATH, so later worlds get the
 * same file without asking Helix about every language again.
 */
let languagesToml: string | null = null;
function initHelix(w: ReturnType<typeof world>): void {
  const file = path.join(w.base, 'config', 'helix', 'languages.toml');
  if (languagesToml !== null) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, languagesToml);
    return;
  }
  const init = w.takeback('init', 'helix', '--hx', hx!);
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toBe(`added takeback to ${file} (beside the servers of ${(fs.readFileSync(file, 'utf8').match(/^\[\[language\]\]$/gm) ?? []).length} languages)\n`);
  languagesToml = fs.readFileSync(file, 'utf8');
  expect(languagesToml).toMatch(/\[language-server\.takeback\]\ncommand = "takeback"\nargs = \["serve"\]/);
}

// ------------------------------------------------------------------------------------------------
// Code action menus

const TITLES = [/Undo the agent's change here/, /Undo the agent's change to this file/, /Undo all \d+ changes? from this turn/, /Undo, replacing later changes/, /\bRedo\b/];

/** The code action titles on screen, top to bottom (the status and message lines left out). */
function menuItems(screen: string): string[] {
  const lines = screen.split('\n').slice(0, -2);
  const items: { row: number; title: string }[] = [];
  lines.forEach((line, row) => {
    for (const re of TITLES) {
      const m = re.exec(line);
      if (m) items.push({ row, title: m[0] });
    }
  });
  return items.sort((a, b) => a.row - b.row).map((i) => i.title);
}

/** Opens the code action menu (space a) until it shows `want` (the server may still be starting). */
async function codeActions(helix: HelixSession, want: RegExp): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    await helix.normalMode();
    helix.keys('Space', 'a');
    try {
      const screen = await helix.waitScreen(`a code action menu with ${want}`, (s) => menuItems(s).some((t) => want.test(t)), 3_000);
      return menuItems(screen);
    } catch {
      helix.keys('Escape');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw new Error(`no code action ${want} within 30 s\nscreen:\n${helix.screen()}`);
}

/** Picks the item matching `want` in the open menu (the first item is preselected). */
function pick(helix: HelixSession, items: string[], want: RegExp): void {
  const at = items.findIndex((t) => want.test(t));
  if (at < 0) throw new Error(`no ${want} in ${JSON.stringify(items)}`);
  for (let i = 0; i < at; i++) helix.keys('Down');
  helix.keys('Enter');
}

// ------------------------------------------------------------------------------------------------

// Each case waits on Helix, the sidecar and the disk in several steps of up to 15–30 s each, and
// the first to init Helix asks `hx --health` about every language: under a loaded CI machine the
// default 60 s would end a slow but passing case, and hide which step was slow. The bound is above
// the sum of a case's own waits, so a step that never happens fails with its own message.
describe(`Helix end to end (${hx ?? hxMissing})`, { timeout: 180_000 }, () => {
  it('key map (clients/helix/config.toml) on a file with no language: preview, undo and redo the newest turn that changed something, undo the buffer, u brings it back', async (ctx) => {
    needHelix(ctx);
    const w = world({ keymap: true });
    const ORIGINAL = 'first line\nthe quick brown fox\nlast line\n';
    const AFTER_EDIT = 'first line\nthe slow red fox\nlast line\n';
    const AGENT = 'first line\nthe slow red fox\nfinal line\n';
    w.write('notes', ORIGINAL);
    w.agent.prompt('Tidy my notes');
    w.agent.edit('notes', 'quick brown', 'slow red');
    w.agent.bash("sed -i 's/last line/final line/' notes");
    w.agent.stop();
    // A later prompt that changed nothing (a question answered): the turn keys pass over it.
    w.agent.prompt('What did you change?');
    w.agent.stop();
    expect(w.read('notes')).toBe(AGENT);
    const listed = JSON.parse(w.takeback('list', '--json').stdout) as { turns: { id: string }[]; sets: { turn: string | null }[] };
    expect(listed.turns).toHaveLength(2);
    expect(listed.sets.every((s) => s.turn !== listed.turns[0]!.id)).toBe(true);

    // Opened after the agent (Helix has no file watcher).
    w.open('notes');
    await w.helix.waitScreen('Helix showing the agent text', /slow red fox[\s\S]*final line/);

    // space u v: preview the turn in a popup; nothing is written.
    w.helix.keys('Space', 'u', 'v');
    await w.helix.waitScreen('the preview popup', /Undo 2 changes \(#2 #1\): 1 file[\s\S]*-final line[\s\S]*\+last line/);
    w.helix.keys('Escape');
    expect(w.read('notes')).toBe(AGENT);

    // space u t: undo the newest turn; the message comes from takeback, the buffer is reloaded.
    w.helix.keys('Space', 'u', 't');
    await w.helix.waitScreen('the turn undone', (s) => /Undid 2 changes/.test(s) && /quick brown fox/.test(s) && !/final line/.test(s));
    expect(w.read('notes')).toBe(ORIGINAL);

    // space u T: redo it.
    w.helix.keys('Space', 'u', 'T');
    await w.helix.waitScreen('the turn redone', (s) => /Redid 2 changes/.test(s) && /slow red fox/.test(s) && /final line/.test(s));
    expect(w.read('notes')).toBe(AGENT);

    // space u u: the newest change to this buffer (the sed).
    w.helix.keys('Space', 'u', 'u');
    await w.helix.waitScreen("this buffer's last change undone", (s) => /Undid 1 change \(#2\)/.test(s) && /last line/.test(s) && !/final line/.test(s));
    expect(w.read('notes')).toBe(AFTER_EDIT);

    // The reload was one undoable step: u brings the agent's change back, :w puts it on disk.
    w.helix.keys('u');
    await w.helix.waitScreen('u bringing the agent change back', /final line/);
    await w.helix.save('the agent text again after u and :w');
    await w.disk('notes', AGENT, 'the agent text again after u and :w');
    expect(await w.helix.quit()).toBe('0');
  });

  it('init helix, then the code action undoes an Edit and a sed -i through Helix buffers; :wa restores the bytes; u brings them back', async (ctx) => {
    needHelix(ctx);
    const w = world();
    const ORIGINAL = '[main]\nname = quick brown\ncolor = blue\n';
    const AGENT = '[main]\nname = slow red\ncolor = red\n';
    const OTHER = '[other]\ncolor = blue\nsize = 3\n';
    w.write('app.ini', ORIGINAL);
    w.write('other.ini', OTHER);

    initHelix(w);

    // Helix is open on app.ini while the agent works.
    w.open('app.ini');
    await w.helix.waitScreen('Helix showing app.ini', /name = quick brown/);
    w.agent.prompt('Rename and recolour');
    w.agent.edit('app.ini', 'quick brown', 'slow red');
    w.agent.bash("sed -i 's/blue/red/' app.ini other.ini");
    w.agent.stop();
    expect(w.read('app.ini')).toBe(AGENT);
    w.helix.command('reload');
    await w.helix.waitScreen('the agent text after :reload', /name = slow red[\s\S]*color = red/);

    const items = await codeActions(w.helix, /Undo all 2 changes from this turn/);
    expect(items).toContain("Undo the agent's change to this file");
    expect(items).not.toContain('Undo, replacing later changes');
    pick(w.helix, items, /Undo all 2 changes from this turn/);
    await w.helix.waitScreen('the undo message', (s) => /takeback: undid/.test(s) && /name = quick brown/.test(s) && /color = blue/.test(s));
    // In Helix's buffers (other.ini opened in the background), not yet on disk: Helix saves nothing itself.
    expect(w.read('app.ini')).toBe(AGENT);

    await w.helix.save('the original bytes after :write-all', 'write-all');
    await w.disk('app.ini', ORIGINAL, 'the original bytes after :write-all');
    await w.disk('other.ini', OTHER, 'the original bytes after :write-all');
    await waitFor('the journal to record the undo', () => {
      const list = JSON.parse(w.takeback('list', '--json').stdout) as { sets: { state: string }[] };
      return list.sets.length === 2 && list.sets.every((s) => s.state === 'undone');
    });

    // One undoable step per document: u in app.ini brings the agent's change back.
    w.helix.keys('u');
    await w.helix.waitScreen('u bringing the agent change back', /name = slow red[\s\S]*color = red/);
    await w.helix.save('the agent text after u and :w');
    await w.disk('app.ini', AGENT, 'the agent text after u and :w');
    expect(w.read('other.ini')).toBe(OTHER);
    expect(await w.helix.quit()).toBe('0');
  });

  it("\"Undo the agent's change here\" is offered on the agent's hunk only and takes back just that hunk through the buffer; :w records it partial; u brings it back", async (ctx) => {
    needHelix(ctx);
    // Every sync of code.ini takes 1.5 s, as on a loaded machine's disk: the bytes of a :w are on
    // the disk, and recorded by the sidecar's watch, well before Helix ends the save; a :w after
    // u sent before that end is refused as "modified by an external process".
    const w = world({ slowFsync: { suffix: '/code.ini', ms: 1500 } });
    const rows = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');
    const ORIGINAL = rows(20);
    const AGENT = ORIGINAL.replace('line 3\n', 'agent 3\n').replace('line 15\n', 'agent 15\n');
    const ONE_BACK = AGENT.replace('agent 15\n', 'line 15\n');
    w.write('code.ini', ORIGINAL);
    initHelix(w);
    w.agent.prompt('Rename two lines');
    w.agent.bash("sed -i -e 's/^line 3$/agent 3/' -e 's/^line 15$/agent 15/' code.ini");
    w.agent.stop();
    expect(w.read('code.ini')).toBe(AGENT);

    w.open('code.ini');
    await w.helix.waitScreen('the agent text', /agent 3/);
    // Line 10 holds nothing of the agent's: the file's actions only.
    w.helix.command('10');
    let items = await codeActions(w.helix, /Undo the agent's change to this file/);
    expect(items).not.toContain("Undo the agent's change here");
    w.helix.keys('Escape');

    w.helix.command('15');
    items = await codeActions(w.helix, /Undo the agent's change here/);
    pick(w.helix, items, /Undo the agent's change here/);
    await w.helix.waitScreen('the hunk undone', (s) => /takeback: undid/.test(s) && /line 15/.test(s) && /agent 3/.test(s) && !/agent 15/.test(s));
    expect(w.read('code.ini')).toBe(AGENT);
    await w.helix.save('only the hunk taken back after :w');
    await w.disk('code.ini', ONE_BACK, 'only the hunk taken back after :w');
    await waitFor('the journal to record the change partial', () => {
      const list = JSON.parse(w.takeback('list', '--json').stdout) as { sets: { state: string }[] };
      return list.sets.length === 1 && list.sets[0]!.state === 'partial';
    });

    w.helix.keys('u');
    await w.helix.waitScreen('u bringing the hunk back', /agent 15/);
    await w.helix.save('the agent text after u and :w');
    await w.disk('code.ini', AGENT, 'the agent text after u and :w');
    expect(await w.helix.quit()).toBe('0');
  });

  it("a save in Helix over the agent's line is the person's, outside the agent's turn: the undo of the agent's change alone is refused naming it, the undo of the turn leaves it", async (ctx) => {
    needHelix(ctx);
    const w = world();
    const ORIGINAL = '[main]\nname = quick brown\ncolor = blue\n';
    const AGENT = '[main]\nname = slow red\ncolor = blue\n';
    const MINE = '[main]\nmine name = slow red\ncolor = blue\n';
    w.write('app.ini', ORIGINAL);
    initHelix(w);
    type Listed = { turns: { id: string }[]; sets: { id: string; turn: string | null; label: string; state: string; source: { kind: string; editor?: string } }[] };
    const list = () => JSON.parse(w.takeback('list', '--json').stdout) as Listed;
    const saves = () => list().sets.filter((s) => s.source.kind === 'person');

    // The agent's turn is open while the person works in Helix.
    w.agent.prompt('Rename');
    w.agent.edit('app.ini', 'quick brown', 'slow red');
    w.open('app.ini');
    await w.helix.waitScreen('the agent text', /name = slow red/);
    // The takeback language server is up once it offers its code actions.
    await codeActions(w.helix, /Undo the agent's change to this file/);
    w.helix.keys('Escape');
    await w.helix.normalMode();

    // The person changes the agent's line and saves.
    w.helix.command('2');
    w.helix.keys('g', 'h', 'i');
    w.helix.type('mine ');
    w.helix.keys('Escape');
    await w.helix.waitScreen('the edit typed', /mine name = slow red/);
    await w.helix.save("the person's save");
    await w.disk('app.ini', MINE, "the person's save");
    await waitFor('the save recorded as the person\'s', () => saves().length === 1, 20_000, () => w.takeback('list').stdout);
    w.agent.stop();

    const listed = list();
    expect(listed.turns).toHaveLength(1);
    const saved = saves()[0]!;
    expect(saved).toMatchObject({ turn: null, label: 'saved in Helix', state: 'applied', source: { kind: 'person', editor: 'Helix' } });
    const turnSets = listed.sets.filter((s) => s.turn === listed.turns[0]!.id);
    expect(turnSets.map((s) => s.label)).toEqual(['Edit app.ini']);
    const edit = turnSets[0]!.id;

    // The agent's change alone: refused, naming the save, with the undo that takes both back.
    const refused = w.takeback('undo', edit);
    expect(refused.code).toBe(1);
    expect(refused.stdout.split('\n').slice(0, 3)).toEqual([
      'Nothing was written: the undo would replace later changes.',
      `  app.ini: changed since by #${saved.id} (saved in Helix): line 2 changed by the agent and line 2 since`,
      `\`takeback undo ${edit} ${saved.id}\` takes both back.`,
    ]);
    expect(w.read('app.ini')).toBe(MINE);

    // The turn's undo never takes the save: the agent's line is the save's too, so it is refused as well.
    const turn = JSON.parse(w.takeback('preview', '--turn', listed.turns[0]!.id, '--json').stdout) as { sets: string[] };
    expect(turn.sets).toEqual([edit]);
    expect(w.takeback('undo', '--turn', listed.turns[0]!.id).stdout).toContain(`saved in Helix`);
    expect(w.read('app.ini')).toBe(MINE);

    // The person takes their word out again (u) and adds a line of their own, and saves: the turn's
    // undo now takes the agent's line back and keeps the person's.
    w.helix.keys('u');
    await w.helix.waitScreen('u taking the word out', (s) => /^\s*\S*\s*name = slow red/m.test(s) && !/mine name/.test(s));
    w.helix.keys('g', 'e', 'o');
    w.helix.type('size = 3');
    w.helix.keys('Escape');
    await w.helix.waitScreen('the line typed', /size = 3/);
    await w.helix.save("the person's second save");
    await w.disk('app.ini', `${AGENT}size = 3\n`, "the person's second save");
    await waitFor('the second save recorded', () => saves().length === 2, 20_000, () => w.takeback('list').stdout);
    const undo = w.takeback('undo', '--turn', listed.turns[0]!.id);
    expect(undo.code, undo.stdout + undo.stderr).toBe(0);
    expect(undo.stdout).toContain(`Undid 1 change (#${edit})`);
    expect(w.read('app.ini')).toBe(`${ORIGINAL}size = 3\n`);
    expect(saves().map((s) => s.state)).not.toContain('undone');
    expect(await w.helix.quit()).toBe('0');
  });

  it("a buffer with unsaved later edits on the agent's line is a conflict and stays untouched; \"Undo, replacing later changes\" replaces them", async (ctx) => {
    needHelix(ctx);
    const w = world();
    const ORIGINAL = '[main]\nname = quick brown\ncolor = blue\n';
    const AGENT = '[main]\nname = slow red\ncolor = red\n';
    w.write('app.ini', ORIGINAL);
    initHelix(w);
    w.agent.prompt('Rename and recolour');
    w.agent.edit('app.ini', 'quick brown', 'slow red');
    w.agent.bash("sed -i 's/blue/red/' app.ini");
    w.agent.stop();

    w.open('app.ini');
    await w.helix.waitScreen('the agent text', /name = slow red/);
    // The user types on the line the agent changed, without saving.
    w.helix.keys('j', 'g', 'h', 'i');
    w.helix.type('mine ');
    w.helix.keys('Escape');
    await w.helix.waitScreen('the unsaved edit', (s) => /mine name = slow red/.test(s) && /\[\+\]/.test(w.helix.statusLine()));

    let items = await codeActions(w.helix, /Undo, replacing later changes/);
    pick(w.helix, items, /Undo the agent's change to this file/);
    await w.helix.waitScreen('the conflict message', /takeback: nothing undone: app\.ini/);
    let screen = w.helix.screen();
    expect(screen).toMatch(/mine name = slow red/);
    expect(w.helix.statusLine()).toMatch(/\[\+\]/);
    expect(w.read('app.ini')).toBe(AGENT);
    expect((JSON.parse(w.takeback('list', '--json').stdout) as { sets: { state: string }[] }).sets.every((s) => s.state === 'applied')).toBe(true);

    // Its own code action (Helix asks no questions): replace the later changes.
    items = await codeActions(w.helix, /Undo, replacing later changes/);
    pick(w.helix, items, /Undo, replacing later changes/);
    await w.helix.waitScreen('the forced undo', (s) => /takeback: undid/.test(s) && /name = quick brown/.test(s) && !/mine name/.test(s));
    screen = w.helix.screen();
    expect(screen).toMatch(/color = blue/);
    await w.helix.save('the original bytes after the forced undo and :w');
    await w.disk('app.ini', ORIGINAL, 'the original bytes after the forced undo and :w');
    expect(await w.helix.quit()).toBe('0');
  });

  it("a buffer with unsaved edits on other lines than the agent's: the undo is merged into the buffer, nothing written under it; :w records it", async (ctx) => {
    needHelix(ctx);
    const w = world();
    const ORIGINAL = '[main]\nname = quick brown\ncolor = blue\nsize = 1\n';
    const AGENT = '[main]\nname = slow red\ncolor = blue\nsize = 1\n';
    w.write('app.ini', ORIGINAL);
    initHelix(w);
    w.agent.prompt('Rename');
    w.agent.edit('app.ini', 'quick brown', 'slow red');
    w.agent.stop();

    w.open('app.ini');
    await w.helix.waitScreen('the agent text', /name = slow red/);
    // The user adds a line at the end, two lines below the agent's, without saving.
    w.helix.keys('g', 'e', 'o');
    w.helix.type('extra = 2');
    w.helix.keys('Escape');
    await w.helix.waitScreen('the unsaved edit', (s) => /extra = 2/.test(s) && /\[\+\]/.test(w.helix.statusLine()));

    const items = await codeActions(w.helix, /Undo the agent's change to this file/);
    expect(items.some((i) => /Undo, replacing later changes/.test(i))).toBe(false);
    pick(w.helix, items, /Undo the agent's change to this file/);
    await w.helix.waitScreen('the merged undo', (s) => /name = quick brown/.test(s) && /extra = 2/.test(s));
    expect(w.helix.statusLine()).toMatch(/\[\+\]/);
    // Nothing under the buffer: the disk keeps the agent's bytes, the journal the change.
    expect(w.read('app.ini')).toBe(AGENT);
    expect((JSON.parse(w.takeback('list', '--json').stdout) as { sets: { state: string }[] }).sets.every((s) => s.state === 'applied')).toBe(true);

    const merged = `${ORIGINAL}extra = 2\n`;
    await w.helix.save('the merged bytes after :w');
    await w.disk('app.ini', merged, 'the merged bytes after :w');
    await waitFor('the undo recorded on :w', () => (JSON.parse(w.takeback('list', '--json').stdout) as { sets: { state: string }[] }).sets.every((s) => s.state === 'undone'), 30_000);
    expect(await w.helix.quit()).toBe('0');
  });
});
