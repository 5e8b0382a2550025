// The command scan: .gitignore (nested files, negation, .git/info/exclude), the folders it
// always skips, a nested repository's .git, git's "racy" rule, the persisted index (only what
// moved is read), the workspace limits, and paths left out by a rule never taken for created
// or deleted.
//
// Whether a scan read a file is observed through the blob store: a read stores the file's bytes
// (when missing) under their SHA-256, so after removing a blob, its coming back means "read".
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesOf, sandbox, sha256, tree } from './support/takeback.js';

function removeBlob(home: string, content: string): void {
  const h = sha256(content);
  fs.rmSync(path.join(home, 'blobs', h.slice(0, 2), h.slice(2)));
}

describe('what the scan covers', () => {
  it('honours .gitignore (nested files, negation, .git/info/exclude); skips .git and node_modules, not build output', () => {
    const sb = sandbox({ git: true });
    sb.write('.gitignore', '*.log\nignored-dir/\n*.gen\n!keep.log\n');
    sb.write('sub/.gitignore', '*.tmp\n!special.gen\n');
    fs.appendFileSync(sb.abs('.git/info/exclude'), 'local-only.txt\n');
    sb.write('plain.txt', 'plain\n');
    sb.write('node_modules/pkg/index.js', 'module.exports = 1;\n');
    sb.tb(['run', '--', 'true']);
    const before = sb.tree();
    const script = [
      'for f in a.log keep.log x.gen local-only.txt plain.txt sub/y.tmp sub/special.gen sub/z.txt sub/deeper/w.gen; do mkdir -p $(dirname $f); printf "new\\n" > $f; done',
      'mkdir -p ignored-dir dist build sub/node_modules/q out && printf i > ignored-dir/i.txt && printf d > dist/bundle.js && printf b > build/x.o',
      'printf n > node_modules/pkg/index.js && printf q > sub/node_modules/q/q.js && printf o > out/o.txt',
      'printf "# touched\\n" >> .git/description',
    ].join(' && ');
    expect(sb.tb(['run', '--', 'sh', '-c', script]).code).toBe(0);
    const after = sb.tree();
    const set = sb.json(['list']).sets[0];
    // Build output is not skipped by name: `dist`, `build` and `out` are not ignored here.
    expect(filesOf(set)).toEqual({
      'keep.log': 'created',
      'plain.txt': 'modified',
      'sub/special.gen': 'created',
      'sub/z.txt': 'created',
      'sub/deeper': 'created',
      dist: 'created',
      'dist/bundle.js': 'created',
      build: 'created',
      'build/x.o': 'created',
      out: 'created',
      'out/o.txt': 'created',
      // Skipped folders the command made are named as gaps (their contents are not captured).
      'ignored-dir': 'created',
      'sub/node_modules': 'created',
    });
    expect(set.files.filter((f: { gap: string | null }) => f.gap).map((f: { path: string; gap: string }) => [f.path, f.gap])).toEqual([
      ['ignored-dir', 'excluded'],
      ['sub/node_modules', 'excluded'],
    ]);
    // Undo touches only what was recorded; ignored and skipped paths stay as the command left them.
    expect(sb.json(['undo', set.id], { code: 6 }).complete).toBe(false);
    const undone = sb.tree();
    const recorded = (rel: string) => ['keep.log', 'plain.txt', 'sub/special.gen', 'sub/z.txt', 'sub/deeper', 'dist', 'build', 'out'].some((p) => rel === p || rel.startsWith(`${p}/`));
    for (const [p, e] of Object.entries(after)) {
      if (recorded(p)) continue;
      expect(undone[p], p).toEqual(e);
    }
    for (const p of ['keep.log', 'sub/special.gen', 'sub/z.txt']) expect(sb.exists(p), p).toBe(false);
    // The folder the command made holds an ignored file the undo does not know: it stays.
    expect(Object.keys(sb.tree()).filter((p) => p.startsWith('sub/deeper'))).toEqual(['sub/deeper', 'sub/deeper/w.gen']);
    expect(undone['plain.txt']).toEqual(before['plain.txt']);
    expect(fs.readFileSync(sb.abs('.git/description'), 'utf8')).toMatch(/# touched\n$/);
  });

  it("outside git, a copied package's dist/ is scanned like any other folder: a mv and an rm there come back with the turn's undo", () => {
    const sb = sandbox();
    sb.write('package.json', '{"name":"diff"}\n');
    sb.write('dist/diff.js', 'module.exports = function diff() {};\n');
    sb.write('dist/diff.min.js', 'module.exports=function(){};\n');
    sb.write('build/notes.txt', 'made by hand\n');
    const before = sb.tree();
    sb.tb(['turn', 'begin']);
    expect(sb.tb(['run', '--', 'sh', '-c', 'mv dist/diff.js moved.txt && rm dist/diff.min.js && rm build/notes.txt']).code).toBe(0);
    sb.tb(['turn', 'end']);
    const set = sb.json(['list']).sets.find((x: { source: { kind: string } }) => x.source.kind === 'command');
    expect(filesOf(set)).toEqual({ 'moved.txt': 'created', 'dist/diff.js': 'deleted', 'dist/diff.min.js': 'deleted', 'build/notes.txt': 'deleted' });
    expect(sb.tb(['undo', '--turn', '1']).code).toBe(0);
    expect(sb.tree()).toEqual(before);
  });

  it("a nested repository's .git is never recorded nor touched", () => {
    const sb = sandbox({ git: true });
    sb.write('lib/nested/file.txt', 'nested\n');
    sb.sh('git init -q lib/nested');
    sb.tb(['run', '--', 'true']);
    const script = 'printf "changed\\n" > lib/nested/file.txt && printf x > lib/nested/.git/new-ref && printf "# c\\n" >> lib/nested/.git/config';
    sb.tb(['run', '--', 'sh', '-c', script]);
    const gitAfter = tree(sb.abs('lib/nested/.git'));
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'lib/nested/file.txt': 'modified' });
    sb.json(['undo', set.id]);
    sb.json(['redo', set.id]);
    sb.json(['undo', set.id]);
    expect(sb.read('lib/nested/file.txt').toString()).toBe('nested\n');
    expect(tree(sb.abs('lib/nested/.git'))).toEqual(gitAfter);
  });

  it('a file left out by a rule is never taken for created or deleted when the rule changes', async () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('.env', 'TOKEN=1\n');
    sb.write('.gitignore', '.env\n');
    // The files must be older than the scans' racy window (2 s) to count as "there all along".
    await new Promise((r) => setTimeout(r, 2200));
    sb.tb(['run', '--', 'true']);
    const before = sb.tree();
    // The command ignores *.txt and stops ignoring .env.
    sb.tb(['run', '--', 'sh', '-c', 'printf "*.txt\\n" > .gitignore']);
    const after = sb.tree();
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ '.gitignore': 'modified' });
    sb.json(['undo', set.id]);
    expect(sb.tree()).toEqual(before);
    sb.json(['redo', set.id]);
    expect(sb.tree()).toEqual(after); // a.txt and .env still there
    // A file the command really creates in a newly visible place is still recorded.
    sb.tb(['run', '--', 'sh', '-c', 'printf "b\\n" > b.env && rm .env']);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'b.env': 'created', '.env': 'deleted' });
  });
});

describe('the persisted index and the racy rule', () => {
  it('a second scan reads nothing that did not move; what moved is read', () => {
    const sb = sandbox();
    const old = Date.now() / 1000 - 3600;
    for (let i = 0; i < 20; i++) {
      sb.write(`f${i}.txt`, `old file ${i}\n`);
      fs.utimesSync(sb.abs(`f${i}.txt`), old, old);
    }
    sb.tb(['run', '--', 'true']); // the first scan reads everything
    for (let i = 0; i < 20; i++) {
      expect(sb.hasBlob(`old file ${i}\n`)).toBe(true);
      removeBlob(sb.home, `old file ${i}\n`);
    }
    // Two more commands, each scanning twice, in new processes: nothing unchanged is read.
    sb.tb(['run', '--', 'true']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "moved\\n" > f3.txt']);
    for (let i = 0; i < 20; i++) expect(sb.hasBlob(`old file ${i}\n`), `f${i}.txt was read again`).toBe(false);
    expect(sb.hasBlob('moved\n')).toBe(true);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'f3.txt': 'modified' });
  });

  it('a file changed within the timestamp tick of a scan is read again by the next scan', () => {
    const sb = sandbox();
    sb.write('racy.txt', 'aaaa\n'); // mtime: now, within the racy window of the next scan
    sb.tb(['run', '--', 'true']);
    expect(sb.hasBlob('aaaa\n')).toBe(true);
    removeBlob(sb.home, 'aaaa\n');
    // Same stat as the index holds, but racy: the next scan reads it again.
    sb.tb(['run', '--', 'true']);
    expect(sb.hasBlob('aaaa\n')).toBe(true);
  });

  it('a same-size rewrite with the mtime put back (to the nanosecond) is still detected', () => {
    const sb = sandbox();
    sb.write('same.txt', 'aaaa\n');
    sb.tb(['run', '--', 'true']);
    const ref = path.join(sb.base, 'ref');
    fs.writeFileSync(ref, '');
    const script = `touch -r same.txt ${ref} && printf "bbbb\\n" > same.txt && touch -r ${ref} same.txt`;
    const mtimeBefore = fs.statSync(sb.abs('same.txt'), { bigint: true }).mtimeNs;
    sb.tb(['run', '--', 'sh', '-c', script]);
    expect(fs.statSync(sb.abs('same.txt'), { bigint: true }).mtimeNs).toBe(mtimeBefore);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'same.txt': 'modified' });
    sb.json(['undo', set.id]);
    expect(sb.read('same.txt').toString()).toBe('aaaa\n');
  });
});

describe('workspace limits', () => {
  it('over TAKEBACK_MAX_WORKSPACE_FILES: file-tool capture only, said in list and doctor', () => {
    const sb = sandbox({ env: { TAKEBACK_MAX_WORKSPACE_FILES: '5' } });
    for (let i = 0; i < 8; i++) sb.write(`f${i}.txt`, `${i}\n`);
    const r = sb.tb(['run', '--', 'sh', '-c', 'printf x > f0.txt']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/commands are not captured here \(over 5 files\)/);
    const list = sb.json(['list']);
    expect(list.sets).toEqual([]);
    expect(list.capture.commands).toBe(false);
    expect(list.capture.reason).toMatch(/over 5 files.*file tools only/);
    expect(sb.tb(['list']).stdout).toMatch(/commands are not captured here/);
    const doc = sb.json(['doctor']);
    expect(doc.capture.commands).toBe(false);
    expect(doc.limits.maxWorkspaceFiles).toBe(5);
    expect(sb.tb(['doctor']).stdout).toMatch(/commands off \(.*over 5 files/);

    // File tools still work, and undo.
    sb.tb(['capture', 'begin', '--id', 'w', '--tool', 'Write', 'f1.txt']);
    sb.write('f1.txt', 'by a tool\n');
    sb.tb(['capture', 'end', '--id', 'w']);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'f1.txt': 'modified' });
    sb.json(['undo', set.id]);
    expect(sb.read('f1.txt').toString()).toBe('1\n');

    // A command that brings the workspace under the limit: nothing it did is guessed at (its
    // scan starts a new baseline), and the next command is blamed for its own changes only.
    const d = sb.tb(['run', '--', 'sh', '-c', 'rm f4.txt f5.txt f6.txt f7.txt']);
    expect(d.stderr).toMatch(/not captured/);
    expect(sb.json(['list']).sets).toHaveLength(1);
    sb.tb(['run', '--', 'sh', '-c', 'printf y > new.txt']);
    expect(sb.json(['list']).capture.commands).toBe(true);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'new.txt': 'created' });
    // A command that takes it over the limit records nothing (and claims no deletes later).
    sb.tb(['run', '--', 'sh', '-c', 'mkdir many && for i in 1 2 3 4 5 6; do printf $i > many/$i; done']);
    expect(sb.json(['list']).sets).toHaveLength(2);
    sb.sh('rm -r many f0.txt'); // back under the limit, with room for z.txt
    sb.tb(['run', '--', 'sh', '-c', 'printf z > z.txt']);
    sb.tb(['run', '--', 'sh', '-c', 'printf z2 > z.txt']);
    const sets = sb.json(['list']).sets;
    expect(sets.map(filesOf)).toEqual([{ 'z.txt': 'modified' }, { 'z.txt': 'created' }, { 'new.txt': 'created' }, { 'f1.txt': 'modified' }]);
  });

  it('over TAKEBACK_MAX_WORKSPACE_BYTES likewise', () => {
    const sb = sandbox({ env: { TAKEBACK_MAX_WORKSPACE_BYTES: '1000' } });
    sb.write('big.txt', 'x'.repeat(2000));
    const r = sb.tb(['run', '--', 'sh', '-c', 'printf x > a.txt']);
    expect(r.stderr).toMatch(/commands are not captured here \(over 1000 bytes\)/);
    expect(sb.json(['doctor']).capture).toMatchObject({ commands: false });
    expect(sb.json(['list']).sets).toEqual([]);
  });
});
