// An undo never reports success for a result it could not check: when files of the selected
// changes are capture gaps (a secret by name here, whose bytes were never kept), the preview names
// them before anything is written, `takeback undo` puts back the rest, names them and exits 6, and
// the sidecar's apply result says `complete: false` (its message a warning, never "nothing to do").
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { sandbox } from './support/takeback.js';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n';

describe('an undo that leaves capture gaps', () => {
  it('takeback undo puts back the rest, names the gap and exits 6; --json says complete: false; a full undo exits 0', () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    sb.write('b.txt', 'b\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    const keyCmd = `printf '%s' '${KEY}' > id_rsa && printf 'after\\n' > a.txt`;
    expect(sb.tb(['run', '--', 'sh', '-c', keyCmd]).code).toBe(0);
    // The person's own runs: named by id (--last names only agents' changes).
    const newest = (): string => sb.json(['list']).sets[0].id;
    const id = newest();

    const preview = sb.tb(['preview', id]);
    expect(preview.code).toBe(0);
    expect(preview.stdout).toMatch(/id_rsa: cannot be restored/);
    expect(preview.stdout).toMatch(/1 capture gap: those files are left as they are/);

    const undo = sb.tb(['undo', id]);
    expect(undo.code, undo.stdout + undo.stderr).toBe(6);
    expect(undo.stdout).toMatch(/a\.txt: /);
    expect(undo.stdout).toMatch(/id_rsa: not restored/);
    expect(undo.stdout).toMatch(/Not complete: 1 file of the selected changes could not be taken back/);
    expect(sb.read('a.txt').toString()).toBe('before\n');
    expect(sb.read('id_rsa').toString()).toBe(KEY); // left as it is

    const redo = sb.json(['redo', '--last']);
    expect(redo.complete).toBe(true);
    const again = sb.json(['undo', id], { code: 6 });
    expect(again).toMatchObject({ written: true, complete: false, gaps: [expect.objectContaining({ path: 'id_rsa', reason: 'secret' })] });

    // A change with no gap undoes completely, exit 0.
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "b2\\n" > b.txt']).code).toBe(0);
    const full = sb.json(['undo', newest()]);
    expect(full).toMatchObject({ written: true, complete: true, gaps: [] });
    expect(sb.read('b.txt').toString()).toBe('b\n');
  });

  it("the sidecar's undo/apply says complete: false and its command warns with the gap's name, also when only gaps are left", async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    expect(sb.tb(['run', '--', 'sh', '-c', `printf '%s' '${KEY}' > id_rsa && printf 'after\\n' > a.txt`]).code).toBe(0);
    const id: string = sb.json(['list']).sets[0].id; // the person's own run: by id
    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    try {
      await editor.initialize();
      const r = await editor.request<any>('undo/apply', { selector: { ids: [id] } });
      expect(r).toMatchObject({ written: true, complete: false, gaps: [expect.objectContaining({ path: 'id_rsa', reason: 'secret' })] });
      expect(fs.readFileSync(path.join(sb.ws, 'a.txt'), 'utf8')).toBe('before\n');

      // Only the gap is left of that change: taking it back again writes nothing, and says why.
      const only = await editor.runCommand<any>({ title: 'undo', command: 'takeback.undo', arguments: [{ ids: r.sets }] });
      expect(only.complete).toBe(false);
      await editor.until(() => editor.messages.some((m) => /not restored: id_rsa/.test(m.message)), 20_000, 'the warning');
      const msg = editor.messages.find((m) => /not restored: id_rsa/.test(m.message))!;
      expect(msg.type).toBe(2); // Warning
      expect(msg.message).not.toMatch(/nothing to undo/);
    } finally {
      await editor.close();
    }
  });
});
