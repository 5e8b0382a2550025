// Byte-exact round trips: a change is captured (by a file tool's begin/end, by `takeback run`,
// or by a bare `capture begin` around a command), then undone, redone and undone again; after
// each step the whole workspace tree (bytes, modes, types, link targets) must equal the known
// state before or after the change.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesOf, lines, sandbox, type Sandbox } from './support/takeback.js';

interface Case {
  name: string;
  /** Makes the state before the change in folder `dir`. Staged bytes go under `stage` (outside the workspace). */
  setup(dir: string, stage: string): void;
  /** The agent's action, a shell script run in `dir`; `$STAGE` is the staging folder. */
  script: string;
  /** The paths a file tool names at `capture begin`. */
  paths: string[];
  /** Expected `path → status` of the recorded set (command capture). */
  files: Record<string, string>;
}

/** Writes `dir/rel` (making its folders), with `mode` when given. */
function put(dir: string, rel: string, content: string | Buffer, mode?: number): void {
  const abs = path.join(dir, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  if (mode !== undefined) fs.chmodSync(abs, mode);
}

const BIN_BEFORE = Buffer.alloc(4096);
const BIN_AFTER = Buffer.alloc(4096);
for (let i = 0; i < 4096; i++) {
  BIN_BEFORE[i] = (i * 37) % 256;
  BIN_AFTER[i] = i % 97 === 0 ? 0 : (i * 37) % 256;
}
BIN_AFTER[2000] = 0xff;

const cases: Case[] = [
  {
    name: 'plain text',
    setup: (d) => put(d, 'a.txt', 'hello\nworld\n'),
    script: `printf 'hello\\nthere\\nworld\\n' > a.txt`,
    paths: ['a.txt'],
    files: { 'a.txt': 'modified' },
  },
  {
    name: 'CRLF with a BOM',
    setup(d, stage) {
      put(d, 'crlf.txt', '\uFEFFline one\r\nline two\r\nline three\r\n');
      fs.writeFileSync(path.join(stage, 'crlf'), '\uFEFFline one\r\nline 2\r\nline three\r\nline four\r\n');
    },
    script: 'cat "$STAGE/crlf" > crlf.txt',
    paths: ['crlf.txt'],
    files: { 'crlf.txt': 'modified' },
  },
  {
    name: 'invalid UTF-8',
    setup(d, stage) {
      put(d, 'bad.txt', Buffer.from([0x61, 0xff, 0xfe, 0x0a, 0xc3, 0x28, 0x0a, 0xed, 0xa0, 0x80, 0x0a]));
      fs.writeFileSync(path.join(stage, 'bad'), Buffer.from([0x61, 0xff, 0x0a, 0xc3, 0x28, 0x0a, 0xf8, 0x88, 0x80, 0x80, 0x80, 0x0a]));
    },
    script: 'cat "$STAGE/bad" > bad.txt',
    paths: ['bad.txt'],
    files: { 'bad.txt': 'modified' },
  },
  {
    name: 'binary',
    setup(d, stage) {
      put(d, 'blob.bin', BIN_BEFORE);
      fs.writeFileSync(path.join(stage, 'bin'), BIN_AFTER);
    },
    script: 'cp "$STAGE/bin" blob.bin',
    paths: ['blob.bin'],
    files: { 'blob.bin': 'modified' },
  },
  {
    name: 'empty files',
    setup(d) {
      put(d, 'full.txt', 'soon empty\n');
      put(d, 'empty.txt', '');
      put(d, 'gone-empty.txt', '');
    },
    script: ': > full.txt && printf x > empty.txt && : > new-empty.txt && rm gone-empty.txt',
    paths: ['full.txt', 'empty.txt', 'new-empty.txt', 'gone-empty.txt'],
    files: { 'full.txt': 'modified', 'empty.txt': 'modified', 'new-empty.txt': 'created', 'gone-empty.txt': 'deleted' },
  },
  {
    name: 'an executable bit and a 0600 file',
    setup(d) {
      put(d, 'tool.sh', '#!/bin/sh\necho hi\n', 0o644);
      put(d, 'private.cfg', 'token=1\n', 0o600);
      put(d, 'was-exec.sh', '#!/bin/sh\n', 0o755);
    },
    script:
      'chmod 755 tool.sh && printf "token=2\\n" > private.cfg && chmod 644 was-exec.sh && ' +
      '(umask 077 && printf "k\\n" > new-private.cfg) && printf "#!/bin/sh\\n" > new.sh && chmod 750 new.sh',
    paths: ['tool.sh', 'private.cfg', 'was-exec.sh', 'new-private.cfg', 'new.sh'],
    files: { 'tool.sh': 'mode', 'private.cfg': 'modified', 'was-exec.sh': 'mode', 'new-private.cfg': 'created', 'new.sh': 'created' },
  },
  {
    name: 'a symlink edited by write-to-temp-and-rename (sed -i)',
    setup(d) {
      put(d, 'target.txt', 'a cat sat\n');
      fs.symlinkSync('target.txt', path.join(d, 'link.txt'));
      fs.mkdirSync(path.join(d, 'sub'));
      fs.symlinkSync('../target.txt', path.join(d, 'sub/up-link'));
    },
    script: "sed -i 's/a/b/' link.txt && sed -i 's/cat/dog/' sub/up-link",
    paths: ['link.txt', 'sub/up-link'],
    files: { 'link.txt': 'type', 'sub/up-link': 'type' },
  },
  {
    name: 'deletes',
    setup(d) {
      put(d, 'keep.txt', 'stays\n');
      put(d, 'del.txt', lines('del', 5));
      put(d, 'tree/one.txt', 'one\n');
      put(d, 'tree/sub/two.bin', BIN_BEFORE, 0o640);
      fs.chmodSync(path.join(d, 'tree/sub'), 0o750);
      fs.symlinkSync('one.txt', path.join(d, 'tree/link'));
    },
    script: 'rm del.txt && rm -r tree',
    // A tool that removes folders names them too.
    paths: ['del.txt', 'tree', 'tree/one.txt', 'tree/sub', 'tree/sub/two.bin', 'tree/link'],
    files: { 'del.txt': 'deleted', tree: 'deleted', 'tree/one.txt': 'deleted', 'tree/sub': 'deleted', 'tree/sub/two.bin': 'deleted', 'tree/link': 'deleted' },
  },
  {
    name: 'creates in new nested folders',
    setup: (d) => put(d, 'README', 'hi\n'),
    script: 'mkdir -p n1/n2/n3 && printf "deep\\n" > n1/n2/n3/f.txt && printf "shallow\\n" > n1/g.txt && ln -s n2/n3/f.txt n1/ln',
    paths: ['n1/n2/n3/f.txt', 'n1/g.txt', 'n1/ln'],
    files: { n1: 'created', 'n1/n2': 'created', 'n1/n2/n3': 'created', 'n1/n2/n3/f.txt': 'created', 'n1/g.txt': 'created', 'n1/ln': 'created' },
  },
  {
    name: 'mv (a delete and a create)',
    setup: (d) => put(d, 'old/name.txt', lines('moved', 3), 0o600),
    script: 'mkdir new && mv old/name.txt new/place.txt',
    paths: ['old/name.txt', 'new/place.txt'],
    files: { 'old/name.txt': 'deleted', new: 'created', 'new/place.txt': 'created' },
  },
];

/** Undo, redo, undo of set `id`, each compared with the whole known tree. */
function roundTrip(sb: Sandbox, id: string, before: object, after: object): void {
  for (const [step, want] of [['undo', before], ['redo', after], ['undo', before]] as const) {
    const r = sb.tb([step, id, '--json']);
    expect(r.code, `${step}: ${r.stdout}${r.stderr}`).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ direction: step, written: true, sets: [id], conflicts: [], gaps: [] });
    expect(sb.tree(), `after ${step}`).toEqual(want);
  }
  expect(sb.json(['show', id]).history.map((h: any) => h.action)).toEqual(['applied', 'undone', 'redone', 'undone']);
}

/** A folder name for a case: "CRLF with a BOM" → "crlf-with-a-bom". */
const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/**
 * A sandbox holding every case, each in its own folder named after it (so that a failing
 * comparison names the case), plus a file nothing touches.
 */
function prepare(chosen: Case[]): { sb: Sandbox; stage: string; dirs: string[] } {
  const sb = sandbox();
  const stage = path.join(sb.base, 'stage');
  fs.mkdirSync(stage);
  const dirs = chosen.map((c) => {
    const dir = sb.abs(slug(c.name));
    fs.mkdirSync(dir);
    c.setup(dir, stage);
    return slug(c.name);
  });
  sb.write('untouched/keep.md', '# keep\n');
  return { sb, stage, dirs };
}

const script = (chosen: Case[], dirs: string[]) => chosen.map((c, i) => `(cd ${dirs[i]} && ${c.script})`).join(' && ');
const expected = (chosen: Case[], dirs: string[]) =>
  Object.fromEntries(chosen.flatMap((c, i) => Object.entries(c.files).map(([p, s]) => [`${dirs[i]}/${p}`, s])));

// Every case at once (each in its own folder), captured three ways: the set must hold exactly
// the expected paths, and undo, redo, undo must give back the whole tree byte for byte.
describe(`byte-exact round trips (undo, redo, undo) of: ${cases.map((c) => c.name).join('; ')}`, () => {
  it('takeback run -- sh -c ... (every case at once)', () => {
    const { sb, stage, dirs } = prepare(cases);
    const before = sb.tree();
    const r = sb.tb(['run', '--', 'sh', '-c', script(cases, dirs)], { env: { ...sb.env, STAGE: stage } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/recorded change 1: \d+ files changed/);
    const after = sb.tree();
    const set = sb.json(['show', '1']);
    expect(set.source).toEqual({ kind: 'command', command: expect.stringMatching(/^sh -c .*cd plain-text/) });
    expect(filesOf(set)).toEqual(expected(cases, dirs));
    expect(set.files.every((f: any) => f.undoable && f.gap === null)).toBe(true);
    roundTrip(sb, '1', before, after);
  });

  it('capture begin with no PATH around a command (every case at once)', () => {
    const { sb, stage, dirs } = prepare(cases);
    const before = sb.tree();
    expect(sb.tb(['capture', 'begin', '--id', 'cmd_1', '--command', 'the script']).code).toBe(0);
    sb.sh(script(cases, dirs).replaceAll('$STAGE', stage));
    const end = sb.tb(['capture', 'end', '--id', 'cmd_1']);
    expect(end.code, end.stderr).toBe(0);
    expect(end.stdout).toMatch(/^recorded change 1: \d+ files changed/);
    const after = sb.tree();
    const set = sb.json(['show', '1']);
    expect(set.source).toEqual({ kind: 'command', command: 'the script' });
    expect(filesOf(set)).toEqual(expected(cases, dirs));
    roundTrip(sb, '1', before, after);
  });

  it('file tool capture begin PATH... / capture end (every case at once)', () => {
    const { sb, stage, dirs } = prepare(cases);
    const before = sb.tree();
    const paths = cases.flatMap((c, i) => c.paths.map((p) => `${dirs[i]}/${p}`));
    expect(sb.tb(['capture', 'begin', '--id', 'toolu_1', '--tool', 'Write', ...paths]).code).toBe(0);
    sb.sh(script(cases, dirs).replaceAll('$STAGE', stage));
    const end = sb.tb(['capture', 'end', '--id', 'toolu_1']);
    expect(end.code, end.stderr).toBe(0);
    const after = sb.tree();
    const set = sb.json(['show', '1']);
    expect(set.source).toEqual({ kind: 'tool', tool: 'Write', toolCallId: 'toolu_1' });
    // A file tool records what it named, and the folders it made on the way.
    expect(filesOf(set)).toEqual(expected(cases, dirs));
    roundTrip(sb, '1', before, after);
  });
});

describe('a file over the size limit', () => {
  for (const via of ['run', 'command', 'tool'] as const) {
    it(`that a command appends to is named as a gap, never deleted, never written (${via})`, () => {
      const sb = sandbox({ env: { TAKEBACK_MAX_FILE_BYTES: '100' } });
      const big = 'x'.repeat(150) + '\n';
      sb.write('big.log', big);
      sb.write('small.txt', 'small\n');
      sb.write('grows.txt', 'under the limit\n');
      const before = sb.tree();
      const script = "printf 'appended\\n' >> big.log && printf 'changed\\n' > small.txt && printf '%0200d\\n' 0 >> grows.txt && printf '%0300d' 1 > huge-new.bin";
      if (via === 'run') expect(sb.tb(['run', '--', 'sh', '-c', script]).code).toBe(0);
      else {
        const begin = ['capture', 'begin', '--id', 'big1', ...(via === 'tool' ? ['--tool', 'Bash', 'big.log', 'small.txt', 'grows.txt', 'huge-new.bin'] : [])];
        expect(sb.tb(begin).code).toBe(0);
        sb.sh(script);
        expect(sb.tb(['capture', 'end', '--id', 'big1']).code).toBe(0);
      }
      const after = sb.tree();
      const set = sb.json(['list']).sets[0];
      const byPath = Object.fromEntries(set.files.map((f: any) => [f.path, f]));
      expect(byPath['big.log']).toMatchObject({ status: 'modified', gap: 'too-large', undoable: false });
      expect(byPath['grows.txt']).toMatchObject({ status: 'modified', gap: 'too-large', undoable: false });
      expect(byPath['huge-new.bin']).toMatchObject({ status: 'created', gap: 'too-large', undoable: false });
      expect(byPath['small.txt']).toMatchObject({ status: 'modified', gap: null, undoable: true });
      // Their bytes are not in the store.
      expect(sb.hasBlob(big + 'appended\n')).toBe(false);
      expect(sb.hasBlob(big)).toBe(false);

      const preview = sb.json(['preview', set.id]);
      const gaps = preview.gaps.map((g: any) => g.path).sort();
      expect(gaps).toEqual(['big.log', 'grows.txt', 'huge-new.bin']);

      const undo = sb.json(['undo', set.id], { code: 6 });
      expect(undo.complete).toBe(false);
      expect(undo.applied.map((a: any) => a.path)).toEqual(['small.txt']);
      expect(undo.gaps.map((g: any) => g.path).sort()).toEqual(['big.log', 'grows.txt', 'huge-new.bin']);
      expect(undo.gaps.every((g: any) => g.reason === 'too-large')).toBe(true);
      // small.txt is back; the big files are exactly as the command left them (not deleted).
      const now = sb.tree();
      expect(now['small.txt']).toEqual(before['small.txt']);
      for (const p of ['big.log', 'grows.txt', 'huge-new.bin']) expect(now[p]).toEqual(after[p]);

      // The big files were left as the command made them: nothing of the redo is left out.
      expect(sb.json(['redo', set.id]).complete).toBe(true);
      expect(sb.tree()).toEqual(after);
      sb.json(['undo', set.id], { code: 6 });
      expect(sb.tree()['huge-new.bin']).toEqual(after['huge-new.bin']);
    });
  }
});

describe('a later user edit', () => {
  for (const via of ['run', 'tool'] as const) {
    it(`is a conflict: exit 1, nothing written, named in --json; --force then works (${via})`, () => {
      const sb = sandbox();
      sb.write('a.txt', lines('a', 5));
      sb.write('b.txt', lines('b', 5));
      sb.write('d.txt', lines('d', 5));
      const before = sb.tree();
      const script = "sed -i 's/a 3/A THREE/' a.txt && printf 'new\\n' >> b.txt && printf 'c\\n' > c.txt && printf 'dd\\n' >> d.txt && printf 'e\\n' > e.txt";
      if (via === 'run') sb.tb(['run', '--', 'sh', '-c', script]);
      else {
        sb.tb(['capture', 'begin', '--id', 'e1', '--tool', 'MultiEdit', 'a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
        sb.sh(script);
        sb.tb(['capture', 'end', '--id', 'e1']);
      }
      const set = sb.json(['list']).sets[0];
      expect(filesOf(set)).toEqual({ 'a.txt': 'modified', 'b.txt': 'modified', 'c.txt': 'created', 'd.txt': 'modified', 'e.txt': 'created' });

      // After the agent, the user edits b, rewrites the file the agent created, deletes d, and
      // deletes e (which the undo would remove anyway: no conflict there).
      sb.write('b.txt', lines('b', 5) + 'new\nmine\n');
      sb.write('c.txt', 'mine now\n');
      fs.rmSync(sb.abs('d.txt'));
      fs.rmSync(sb.abs('e.txt'));
      const edited = sb.tree();

      const preview = sb.json(['preview', set.id]);
      expect(preview.conflicts).toBe(3);
      const pf = Object.fromEntries(preview.files.map((f: any) => [f.path, f]));
      expect(pf['b.txt'].conflict).toMatchObject({ reason: 'changed-since', detail: 'changed since outside takeback: line 6 changed by the agent and line 7 since' });
      expect(pf['c.txt'].conflict).toMatchObject({ reason: 'changed-since' });
      expect(pf['d.txt'].conflict).toMatchObject({ reason: 'changed-since', detail: 'deleted since outside takeback' });
      expect(pf['a.txt'].conflict).toBeNull();
      expect(pf['e.txt']).toMatchObject({ action: 'none', conflict: null });
      expect(sb.tree()).toEqual(edited); // preview writes nothing

      const r = sb.tb(['undo', set.id, '--json']);
      expect(r.code).toBe(1);
      const out = JSON.parse(r.stdout);
      expect(out.written).toBe(false);
      expect(out.applied).toEqual([]);
      expect(out.conflicts.map((c: any) => c.path).sort()).toEqual(['b.txt', 'c.txt', 'd.txt']);
      expect(out.conflicts.every((c: any) => c.reason === 'changed-since')).toBe(true);
      expect(sb.tree()).toEqual(edited); // nothing written, not even a.txt
      expect(sb.json(['list']).sets[0].state).toBe('applied');

      // Human output says so too, and still writes nothing.
      const human = sb.tb(['undo', set.id]);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(/^Nothing was written: the undo would replace later changes\.\n {2}b\.txt: changed since outside takeback: line 6 .+\n {2}c\.txt: changed since outside takeback\n {2}d\.txt: deleted since outside takeback\nRun it again with --force/);
      expect(human.stdout).toMatch(/--force/);
      expect(sb.tree()).toEqual(edited);

      const forced = sb.json(['undo', set.id, '--force']);
      expect(forced.written).toBe(true);
      expect(forced.forced).toBe(true);
      expect(sb.tree()).toEqual(before);
      const show = sb.json(['show', set.id]);
      expect(show.state).toBe('undone');
      expect(show.history.at(-1)).toMatchObject({ action: 'undone', forced: true });
    });
  }
});

describe('type changes', () => {
  /** Captures `script` with `takeback run`, then undo, redo, undo against the known trees. */
  function typeChange(setup: (sb: Sandbox) => void, script: string, files: Record<string, string>): void {
    const sb = sandbox();
    setup(sb);
    const before = sb.tree();
    expect(sb.tb(['run', '--', 'sh', '-c', script]).code).toBe(0);
    const after = sb.tree();
    expect(filesOf(sb.json(['show', '1']))).toEqual(files);
    roundTrip(sb, '1', before, after);
  }

  it('a folder mode, a link that became an empty folder, an empty folder that became a file', () => {
    typeChange(
      (sb) => {
        sb.write('dm/x', 'x\n');
        sb.write('f', 'f\n');
        fs.symlinkSync('f', sb.abs('l'));
        fs.mkdirSync(sb.abs('e'));
      },
      'chmod 700 dm && rm l && mkdir l && rmdir e && printf "e\\n" > e',
      { dm: 'mode', l: 'type', e: 'type' },
    );
  });

  // apply.ts order(): removals come first, so the folder a file takes the place of is empty by then.
  it('a file that became a folder holding files, and a folder holding files that became a file', () => {
    typeChange(
      (sb) => {
        sb.write('f', 'f\n');
        sb.write('dd/y', 'y\n');
      },
      'rm f && mkdir f && printf "in\\n" > f/x && rm -r dd && printf "file now\\n" > dd',
      { f: 'type', 'f/x': 'created', dd: 'type', 'dd/y': 'deleted' },
    );
  });
});
