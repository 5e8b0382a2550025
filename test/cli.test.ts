// The command line: exit codes, the --json shapes of list/show/preview/undo/redo (issue 2 §4),
// human output ("3 files changed +24 −7", grouped by turn, newest first), colour only on a
// terminal.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, lines, sandbox, type Sandbox } from './support/takeback.js';

const ANSI = /\u001b\[/;

/** Two turns: t1 makes 3 files change +24 −7; t2 touches a binary file, a mode and a link. */
function history(): Sandbox {
  const sb = sandbox();
  sb.write('a.txt', lines('a', 10));
  sb.write('bin.dat', Buffer.from([0, 1, 2, 3, 0, 5]));
  sb.write('run.sh', '#!/bin/sh\n', 0o644);
  sb.write('target-1', 't1\n');
  fs.symlinkSync('target-1', sb.abs('link'));
  sb.tb(['turn', 'begin', '--label', 'first prompt\nsecond line']);
  const r = sb.tb(['run', '--', 'sh', '-c', `head -n 3 a.txt > a.tmp && mv a.tmp a.txt && seq 1 20 > b.txt && printf '1\\n2\\n3\\n4\\n' > c.txt`]);
  expect(r.stderr).toMatch(/^takeback: recorded change 1: 3 files changed \+24 −7$/m);
  sb.tb(['turn', 'end']);
  sb.tb(['turn', 'begin', '--label', 'second prompt']);
  sb.tb(['run', '--', 'sh', '-c', 'printf "\\000\\377" >> bin.dat && chmod 755 run.sh && ln -sfn target-2 link && rm c.txt']);
  sb.tb(['turn', 'end']);
  return sb;
}

/** One history for the tests that only read it. */
let shared: Sandbox;
beforeAll(() => {
  shared = history();
});
afterAll(() => {
  if (shared && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(shared.base, { recursive: true, force: true });
});

describe('the command line', () => {
  it('list: human output grouped by turn, newest first, with counts and marks; no colour when piped', () => {
    const sb = shared;
    const r = sb.tb(['list']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ANSI);
    const out = r.stdout;
    expect(out.indexOf('Turn t2')).toBeLessThan(out.indexOf('Turn t1'));
    expect(out).toMatch(/Turn t1 · "first prompt"/);
    expect(out).toMatch(/#1 .* 3 files changed \+24 −7/);
    expect(out).toMatch(/^ +a\.txt +\+0 −7$/m);
    expect(out).toMatch(/^ +b\.txt +\+20 −0 \(created\)$/m);
    expect(out).toMatch(/^ +c\.txt +\+0 −4 \(deleted\)$/m);
    expect(out).toMatch(/^ +run\.sh +\+0 −0 \(mode\)$/m);
    // Colour is for terminals (and FORCE_COLOR); NO_COLOR wins.
    expect(sb.tb(['list'], { env: { ...sb.env, FORCE_COLOR: '1' } }).stdout).toMatch(ANSI);
    expect(sb.tb(['list'], { env: { ...sb.env, FORCE_COLOR: '1', NO_COLOR: '1' } }).stdout).not.toMatch(ANSI);
    const tty = spawnSync('script', ['-qc', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} list`, '/dev/null'], { cwd: sb.ws, env: sb.env, encoding: 'utf8' });
    if (tty.status === 0) expect(tty.stdout).toMatch(ANSI);
  });

  it('list shows the first files of a long set and how many more (a file with a capture gap always); show lists them all', () => {
    const sb = sandbox();
    expect(sb.tb(['run', '--', 'sh', '-c', 'for i in 01 02 03 04 05 06 07 08 09 10 11 12; do printf "$i\\n" > f$i.txt; done; printf k > zz.pem']).code).toBe(0);
    const out = sb.tb(['list']).stdout;
    expect(out).toMatch(/13 files changed/);
    for (let i = 1; i <= 9; i++) expect(out).toContain(`f0${i}.txt`);
    expect(out).not.toContain('f10.txt');
    expect(out).toMatch(/^ +zz\.pem .*\[gap: secret\]$/m);
    expect(out).toMatch(/^ +… 3 more files: takeback show 1$/m);
    const show = sb.tb(['show', '1']).stdout;
    for (const n of ['f10.txt', 'f11.txt', 'f12.txt', 'zz.pem']) expect(show).toContain(n);
    // Ten files or fewer: all of them, no summary line.
    expect(sb.tb(['run', '--', 'sh', '-c', 'rm f11.txt f12.txt']).code).toBe(0);
    expect(sb.tb(['list']).stdout.split('#2')[1]!.split('#1')[0]).not.toMatch(/more file/);
  });

  it('the first (cold) scan shows its progress on a terminal, and only there', () => {
    const sb = sandbox();
    for (let i = 0; i < 2500; i++) sb.write(`d${i % 25}/f${i}.txt`, `${i}\n`);
    // Not a terminal: nothing on stderr.
    const piped = sb.tb(['run', '--', 'true']);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe('');
    // A terminal (script(1) gives the command one): a fresh journal scans cold and says so.
    const fresh = { ...sb.env, TAKEBACK_HOME: `${sb.home}-tty` };
    const tty = spawnSync('script', ['-qc', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run -- true`, '/dev/null'], { cwd: sb.ws, env: fresh, encoding: 'utf8' });
    if (tty.status !== 0 && /not found|No such/.test(tty.stderr)) return; // no script(1) here
    expect(tty.status, tty.stderr).toBe(0);
    expect(tty.stdout).toMatch(/\rtakeback: first look at this workspace: [\d,]+ files/);
    expect(tty.stdout).toContain('\r\x1b[K');
    // Warm, it has nothing to say.
    const warm = spawnSync('script', ['-qc', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run -- true`, '/dev/null'], { cwd: sb.ws, env: fresh, encoding: 'utf8' });
    expect(warm.stdout).not.toMatch(/first look/);
  });

  it('a file name with a newline or a tab is shown quoted in the human output, and kept as it is', () => {
    const sb = sandbox();
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf x > "$(printf "new\\nline.txt")"; printf y > "$(printf "a\\tb.txt")"']).code).toBe(0);
    expect(sb.exists('new\nline.txt')).toBe(true);
    const out = sb.tb(['list']).stdout;
    expect(out).toContain('"new\\nline.txt"');
    expect(out).toContain('"a\\tb.txt"');
    expect(out.split('\n').some((l) => l.trim() === 'line.txt')).toBe(false);
    const undo = sb.tb(['undo', '1']).stdout;
    expect(undo).toContain('"new\\nline.txt": remove (the agent created it)');
    expect(sb.exists('new\nline.txt')).toBe(false);
    expect(sb.json(['show', '1']).files.map((f: any) => f.path).sort()).toEqual(['a\tb.txt', 'new\nline.txt']);
  });

  it('list --json: sets with id, turn, source, state, files[] (path, status, added, removed, undoable, gap)', () => {
    const sb = shared;
    const list = sb.json(['list']);
    expect(list).toMatchObject({ workspace: sb.ws, capture: { commands: true, reason: null } });
    expect(list.turns.map((t: any) => t.id)).toEqual(['t2', 't1']);
    expect(list.turns[1]).toMatchObject({ id: 't1', seq: 1, label: 'first prompt', start: expect.any(Number), end: expect.any(Number) });
    expect(list.sets).toHaveLength(2);
    const [second, first] = list.sets;
    expect(first).toMatchObject({
      id: '1',
      turn: 't1',
      source: { kind: 'command', command: expect.stringContaining('head -n 3 a.txt') },
      state: 'applied',
      added: 24,
      removed: 7,
      time: expect.any(Number),
    });
    expect(first.files).toEqual([
      expect.objectContaining({ path: 'a.txt', status: 'modified', added: 0, removed: 7, undoable: true, gap: null }),
      expect.objectContaining({ path: 'b.txt', status: 'created', added: 20, removed: 0, undoable: true, gap: null }),
      expect.objectContaining({ path: 'c.txt', status: 'created', added: 4, removed: 0, undoable: true, gap: null }),
    ]);
    expect(Object.fromEntries(second.files.map((f: any) => [f.path, [f.status, f.added, f.removed]]))).toEqual({
      'bin.dat': ['modified', 0, 0],
      'c.txt': ['deleted', 0, 4],
      link: ['modified', 0, 0],
      'run.sh': ['mode', 0, 0],
    });
    expect(sb.json(['list', '--turn', 't1']).sets.map((s: any) => s.id)).toEqual(['1']);
  });

  it('show --json: both states of every file and the history', () => {
    const sb = shared;
    const s = sb.json(['show', '2']);
    expect(s).toMatchObject({ id: '2', turn: 't2', state: 'applied', history: [{ action: 'applied', time: expect.any(Number) }] });
    const byPath = Object.fromEntries(s.files.map((f: any) => [f.path, f]));
    expect(byPath.link.before).toEqual({ exists: true, type: 'symlink', target: 'target-1', mode: expect.any(Number) });
    expect(byPath.link.after).toMatchObject({ exists: true, type: 'symlink', target: 'target-2' });
    expect(byPath['run.sh'].before).toMatchObject({ exists: true, type: 'file', mode: 0o644, size: 10, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(byPath['run.sh'].after).toMatchObject({ mode: 0o755, sha256: byPath['run.sh'].before.sha256 });
    expect(byPath['c.txt'].after).toEqual({ exists: false });
    const human = sb.tb(['show', '2']).stdout;
    expect(human).toMatch(/^Change 2 /);
    expect(human).toMatch(/before: link → target-1/);
    expect(human).toMatch(/history:\n.*applied/);
  });

  it('preview --json: files[] with path, action, conflict, diff (3 lines of context), gap; writes nothing', () => {
    const sb = history();
    const before = sb.tree();
    const p = sb.json(['preview', '--turn', 't2']);
    expect(p).toMatchObject({ direction: 'undo', sets: ['2'], skipped: [], conflicts: 0, gaps: [] });
    const f = Object.fromEntries(p.files.map((x: any) => [x.path, x]));
    expect(f['bin.dat']).toMatchObject({ action: 'put-back', conflict: null, gap: null, diff: null, note: 'binary files differ' });
    expect(f['c.txt']).toMatchObject({ action: 'bring-back', conflict: null, gap: null });
    expect(f['c.txt'].diff).toBe('--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1,4 @@\n+1\n+2\n+3\n+4\n');
    expect(f['run.sh']).toMatchObject({ action: 'restore-mode', note: 'mode 0755 → 0644', diff: null });
    expect(f.link).toMatchObject({ action: 'restore-link', note: 'becomes a link to target-1' });
    expect(sb.json(['preview', '1']).files.find((x: any) => x.path === 'b.txt')).toMatchObject({ action: 'remove' });

    // Three lines of context around a change in the middle of a file.
    sb.write('ctx.txt', lines('l', 12));
    sb.tb(['run', '--', 'sh', '-c', "sed -i 's/^l 6$/six/' ctx.txt"]); // change 3, outside any turn
    const d = sb.json(['preview', '3']).files[0].diff;
    expect(d).toBe('--- a/ctx.txt\n+++ b/ctx.txt\n@@ -3,7 +3,7 @@\n l 3\n l 4\n l 5\n-six\n+l 6\n l 7\n l 8\n l 9\n');
    // Human preview says the actions.
    const h = sb.tb(['preview', '--turn', 't2']).stdout;
    expect(h).toMatch(/^Undo 1 change \(#2\): 4 files/);
    expect(h).toMatch(/c\.txt: bring back \(the agent deleted it\)/);
    expect(h).toMatch(/run\.sh: restore mode/);
    expect(h).not.toMatch(ANSI);
    sb.tb(['undo', '3']);
    expect(sb.tree()).toEqual({ ...before, 'ctx.txt': sb.tree()['ctx.txt'] });
    expect(sb.json(['list']).sets.map((s: any) => s.state)).toEqual(['undone', 'applied', 'applied']);
    // --redo previews the other way.
    const r = sb.json(['preview', '--redo', '--last']);
    expect(r).toMatchObject({ direction: 'redo', sets: ['3'] });
  });

  it('undo/redo --json: applied[], conflicts[], gaps[]; human output', () => {
    const sb = history();
    const u = sb.json(['undo', '--turn', 't2']);
    expect(u).toMatchObject({ direction: 'undo', sets: ['2'], conflicts: [], gaps: [], skipped: [], written: true, forced: false });
    expect(u.applied.map((a: any) => [a.path, a.action]).sort()).toEqual([
      ['bin.dat', 'put-back'],
      ['c.txt', 'bring-back'],
      ['link', 'restore-link'],
      ['run.sh', 'restore-mode'],
    ]);
    const r = sb.tb(['redo', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Redid 1 change \(#2\): 4 files\./);
    expect(r.stdout).toMatch(/c\.txt: remove again \(as the change did\)/);
    expect(r.stdout).toMatch(/bin\.dat: write again as it was before the undo/);
    expect(r.stdout).toMatch(/run\.sh: mode as the change set it/);
    expect(r.stdout).not.toMatch(/put back/);
    expect(r.stdout).not.toMatch(ANSI);
    const again = sb.tb(['redo', '2']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Nothing to redo: #2 not undone/);
  });

  it('exit codes: 0 done, 1 conflicts, 2 usage, 3 not found', () => {
    const sb = history();
    expect(sb.tb(['--version']).code).toBe(0);
    const help = sb.tb(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: takeback/);
    for (const args of [
      ['list', '--bogus'],
      ['frobnicate'],
      ['show'],
      ['undo', '--force'],
      ['capture', 'begin', 'f.txt'], // --id is required
      ['undo', '1', '--turn', 't1'],
      ['init', 'vim-of-the-future'],
      ['preview', '--file', '/etc/passwd', '--last'],
    ]) {
      const r = sb.tb(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      // With --json the same error is an object on stdout, and nothing else is written.
      const j = sb.tb([...args, '--json']);
      expect(j.code, `${args.join(' ')} --json`).toBe(2);
      expect(JSON.parse(j.stdout).error, `${args.join(' ')} --json`).toMatchObject({ code: expect.stringMatching(/^(usage|outside-workspace)$/), message: expect.any(String) });
      expect(j.stderr, `${args.join(' ')} --json`).toBe('');
    }
    expect(sb.tb(['show', '42']).code).toBe(3);
    fs.writeFileSync(sb.abs('b.txt'), 'edited by the user\n');
    expect(sb.tb(['undo', '1']).code).toBe(1);
    expect(sb.tb(['undo', '1', '--force']).code).toBe(0);
    expect(sb.tb(['undo', '1']).code).toBe(0); // already undone: nothing to do
  });

  it('list shows the newest 20 turns and says how many older ones it left out; --all shows every one', () => {
    const sb = sandbox();
    for (let i = 1; i <= 22; i++) {
      expect(sb.tb(['turn', 'begin', '--id', `T${i}`]).code).toBe(0);
      expect(sb.tb(['capture', 'begin', '--id', `w${i}`, '--tool', 'Write', 'f.txt']).code).toBe(0);
      sb.write('f.txt', `v${i}\n`);
      expect(sb.tb(['capture', 'end', '--id', `w${i}`]).code).toBe(0);
      expect(sb.tb(['turn', 'end']).code).toBe(0);
    }
    const some = sb.json(['list']);
    expect(some.turns.map((t: any) => t.id)).toEqual(Array.from({ length: 20 }, (_, k) => `T${22 - k}`));
    expect(some.omittedTurns).toBe(2);
    expect(sb.tb(['list']).stdout).toContain('2 older turns not shown: takeback list --all');
    const all = sb.json(['list', '--all']);
    expect(all.turns).toHaveLength(22);
    expect(all.sets).toHaveLength(22);
    expect(all.omittedTurns).toBe(0);
    // One agent's: the same rule, counted among that agent's turns only.
    expect(sb.tb(['turn', 'begin', '--id', 'G1', '--agent', 'gemini']).code).toBe(0);
    const cli = sb.json(['list', '--agent', 'cli']);
    expect([cli.turns.length, cli.turns[0].id, cli.omittedTurns, cli.sets.length]).toEqual([20, 'T22', 2, 20]);
    const gem = sb.json(['list', '--agent', 'gemini']);
    expect([gem.turns.map((t: any) => t.id), gem.omittedTurns, gem.sets]).toEqual([['G1'], 0, []]);
  }, 180_000); // about a hundred processes of the real CLI: a minute or more on a loaded machine

  it('doctor --json reports the journal', () => {
    const sb = shared;
    const d = sb.json(['doctor']);
    expect(d).toMatchObject({
      workspace: sb.ws,
      home: sb.home,
      capture: { commands: true },
      sets: { applied: 2, undone: 0 },
      turns: { total: 2, open: 0 },
      captures: { open: 0, stale: 0 },
      transactions: 0,
      problems: [],
    });
    expect(d.blobs.count).toBeGreaterThan(3);
    expect(d.snapshot.files).toBe(6);
    // No agent is hooked in this sandbox: doctor says so instead of "no problems found".
    expect(sb.tb(['doctor']).stdout).toMatch(/no agent is hooked here: run takeback init/);
  });
});

describe('list, a turn that a person\'s change came between', () => {
  it('heads the turn again as "(continued)", not as a second turn of that name', () => {
    const sb = sandbox({ git: true });
    try {
      sb.write('a.txt', 'one\n');
      sb.write('b.txt', 'two\n');
      const claude = (ev: object) => expect(sb.hook({ session_id: 'person-between', cwd: sb.ws, ...ev }).code).toBe(0);
      const bash = (id: string, cmd: string) => {
        claude({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: id, tool_input: { command: cmd } });
        spawnSync('sh', ['-c', cmd], { cwd: sb.ws });
        claude({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: id, tool_input: { command: cmd }, tool_response: {} });
      };
      claude({ hook_event_name: 'UserPromptSubmit', prompt: 'two edits' });
      bash('toolu_c1', 'echo agent >> a.txt');
      // The person's own command, while the agent's turn is open: not the agent's.
      expect(sb.tb(['run', '--', 'sh', '-c', 'echo person >> b.txt']).code).toBe(0);
      bash('toolu_c2', 'echo agent again >> a.txt');
      const out = sb.tb(['list']).stdout.split('\n');
      const heads = out.filter((l) => /^(Turn |Outside any turn)/.test(l));
      expect(heads).toHaveLength(3);
      expect(heads[0]).toMatch(/^Turn t1 · "two edits" · claude-code/);
      expect(heads[1]).toBe('Outside any turn');
      expect(heads[2]).toBe('Turn t1 (continued)');
    } finally {
      if (!process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
    }
  });
});
