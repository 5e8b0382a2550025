// A conflict says who changed the file since, through the real CLI on real files: a later
// recorded change still in place (its id, what made it, its turn, and the undo that takes both
// back, which then goes through), that change and an edit outside takeback after it, or an edit
// outside takeback alone.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { lines, sandbox, type Sandbox } from './support/takeback.js';

let sb: Sandbox | null = null;

afterEach(() => {
  if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
  sb = null;
});

const TEN = lines('line', 10);
/** The second command as the journal records it (quoted as a shell would take it). */
const SECOND = "sed -i 's/^agent 2$/pretty 2/' app.js";

/** Runs `cmd` through `takeback run` inside a turn of its own; returns the id of the set it recorded. */
function inTurn(s: Sandbox, cmd: string[]): string {
  expect(s.tb(['turn', 'begin', '--label', cmd.join(' ')]).code).toBe(0);
  const r = s.tb(['run', '--', ...cmd]);
  expect(r.code, r.stderr).toBe(0);
  expect(s.tb(['turn', 'end']).code).toBe(0);
  return s.json(['list']).sets[0].id as string;
}

/** A workspace whose app.js the agent changed (line 2, turn 1), then a second command (line 2 again, turn 2). */
function twoChanges(): { s: Sandbox; first: string; second: string } {
  const s = sandbox();
  s.write('app.js', TEN);
  expect(s.tb(['run', '--', 'true']).code).toBe(0);
  const first = inTurn(s, ['sed', '-i', 's/^line 2$/agent 2/', 'app.js']);
  const second = inTurn(s, ['sed', '-i', 's/^agent 2$/pretty 2/', 'app.js']);
  return { s, first, second };
}

describe('a conflict says who changed the file since', () => {
  it('a later recorded change still in place: its id, its command and turn, and the undo that takes both back, which goes through', () => {
    const { s, first, second } = twoChanges();
    sb = s;
    const now = sb.read('app.js');

    const r = sb.tb(['undo', first, '--json']);
    expect(r.code).toBe(1);
    // Who changed it is in the detail; the undo that takes both back is data, for each client to word.
    const detail = `changed since by #${second} (${SECOND}, turn 2): line 2 changed by the agent and line 2 since`;
    expect(JSON.parse(r.stdout).conflicts).toEqual([{ path: 'app.js', reason: 'changed-since', detail, combined: [first, second] }]);
    expect(sb.read('app.js')).toEqual(now);
    // The preview gives the later change's id as data too.
    const p = sb.json(['preview', first]);
    expect(p.files[0].conflict).toEqual({ reason: 'changed-since', detail, sets: [second], combined: [first, second] });
    // Said to people as git refuses: what did not happen, the file with its reason once and who
    // changed it, then the undo that takes both back, then --force.
    expect(sb.tb(['undo', first]).stdout.split('\n').slice(0, 4)).toEqual([
      'Nothing was written: the undo would replace later changes.',
      `  app.js: changed since by #${second} (${SECOND}, turn 2): line 2 changed by the agent and line 2 since`,
      `\`takeback undo ${first} ${second}\` takes both back.`,
      expect.stringMatching(/^Or run it again with --force to replace the later changes/),
    ]);
    expect(sb.tb(['preview', first]).stdout).toContain(`app.js: put back CONFLICT: ${detail} — \`takeback undo ${first} ${second}\` takes both back\n`);
    expect(sb.tb(['preview', first]).stdout).toContain('The undo would stop at the conflict above; --force replaces the later changes.');

    // What it says to do works.
    const both = sb.json(['undo', first, second]);
    expect(both.written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(TEN);
  });

  it('a later recorded change, then an edit outside takeback: both are named', () => {
    const { s, first, second } = twoChanges();
    sb = s;
    fs.writeFileSync(sb.abs('app.js'), sb.read('app.js').toString().replace('pretty 2', 'mine 2'));
    const out = JSON.parse(sb.tb(['undo', first, '--json']).stdout);
    expect(out.conflicts[0].detail).toBe(
      `changed since by #${second} (${SECOND}, turn 2) and outside takeback: line 2 changed by the agent and line 2 since`,
    );
    expect(out.conflicts[0].combined).toEqual([first, second]);
  });

  it('a later change taken back is not named: the edit since is outside takeback', () => {
    const { s, first, second } = twoChanges();
    sb = s;
    expect(sb.json(['undo', second]).written).toBe(true);
    fs.writeFileSync(sb.abs('app.js'), sb.read('app.js').toString().replace('agent 2', 'mine 2'));
    const out = JSON.parse(sb.tb(['undo', first, '--json']).stdout);
    expect(out.conflicts).toEqual([{ path: 'app.js', reason: 'changed-since', detail: 'changed since outside takeback: line 2 changed by the agent and line 2 since' }]);
  });

  it('a file deleted by a later recorded change: "deleted since by" that change', () => {
    const { s, first } = twoChanges();
    sb = s;
    const gone = inTurn(sb, ['rm', 'app.js']);
    const out = JSON.parse(sb.tb(['undo', first, '--json']).stdout);
    expect(out.conflicts[0].detail).toMatch(new RegExp(`^deleted since by #\\d+ \\(sed [^)]*, turn 2\\); #${gone} \\(rm app\\.js, turn 3\\)$`));
    expect(out.conflicts[0].combined).toEqual([first, expect.stringMatching(/^\d+$/), gone]);
    // Three ids: the command line says "them all".
    expect(sb.tb(['undo', first]).stdout).toMatch(new RegExp(`^\`takeback undo ${first} \\d+ ${gone}\` takes them all back\\.$`, 'm'));
  });

  it("an undo of a whole turn: the undo that takes the later change back too takes the turn's other changes as well", () => {
    const s = sandbox();
    sb = s;
    s.write('app.js', TEN);
    s.write('other.js', TEN);
    expect(s.tb(['run', '--', 'true']).code).toBe(0);
    expect(s.tb(['turn', 'begin', '--label', 'two files']).code).toBe(0);
    expect(s.tb(['run', '--', 'sed', '-i', 's/^line 5$/agent 5/', 'other.js']).code).toBe(0);
    expect(s.tb(['run', '--', 'sed', '-i', 's/^line 2$/agent 2/', 'app.js']).code).toBe(0);
    expect(s.tb(['turn', 'end']).code).toBe(0);
    const turn = s.json(['list']).sets.map((x: { id: string }) => x.id).sort((a: string, b: string) => Number(a) - Number(b));
    expect(turn).toHaveLength(2);
    const later = inTurn(s, ['sed', '-i', 's/^agent 2$/pretty 2/', 'app.js']);

    const out = JSON.parse(s.tb(['undo', '--turn', '1', '--json']).stdout);
    expect(out.conflicts[0].combined).toEqual([...turn, later]);
    const hint = `\`takeback undo ${[...turn, later].join(' ')}\` takes them all back.`;
    expect(s.tb(['undo', '--turn', '1']).stdout.split('\n')).toContain(hint);
    // What it says to do takes back the whole turn with the later change.
    expect(s.json(['undo', ...turn, later]).written).toBe(true);
    expect(s.read('app.js').toString()).toBe(TEN);
    expect(s.read('other.js').toString()).toBe(TEN);
  });
});
