// `takeback init cline [--user] [--remove]`: one hook program per event in Cline's hooks folder
// (`.cline/hooks` of the folder Cline works in, or `$CLINE_DIR/hooks`), each a shell script that
// hands the event to takeback and exits 0 printing nothing; beside the user's own programs,
// never over them; twice changes nothing; --remove deletes ours only, and the folders left empty.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox } from './support/takeback.js';

const EVENTS = ['PostToolUse', 'PreToolUse', 'TaskCancel', 'TaskComplete', 'TaskError', 'TaskResume', 'TaskStart'];

describe('init cline', () => {
  it('writes a program per event, mode 0755, that records the event; twice changes nothing; --remove deletes them and the folders it made', () => {
    const sb = sandbox({ git: true });
    const dir = sb.abs('.cline/hooks');
    const r = sb.tb(['init', 'cline']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`added takeback hooks to ${dir}\n${r.stdout.split('\n')[1]}\n`);
    expect(r.stdout).toMatch(/this very folder/);
    expect(fs.readdirSync(dir).sort()).toEqual(EVENTS);
    const texts = EVENTS.map((e) => fs.readFileSync(path.join(dir, e), 'utf8'));
    for (const e of EVENTS) expect(fs.statSync(path.join(dir, e)).mode & 0o777, e).toBe(0o755);
    expect(sb.tb(['init', 'cline']).stdout).toMatch(/^nothing to change in /);
    expect(EVENTS.map((e) => fs.readFileSync(path.join(dir, e), 'utf8'))).toEqual(texts);

    // Cline runs the program with the event on stdin, its hookName naming the event.
    const start = { clineVersion: '', hookName: 'agent_start', timestamp: '2026-12-01T00:00:00.000Z', taskId: 'conv_1', sessionContext: { rootSessionId: 's1' }, workspaceRoots: [sb.ws], taskStart: { taskMetadata: {} } };
    const h = spawnSync(path.join(dir, 'TaskStart'), [], { cwd: sb.ws, env: sb.env, input: JSON.stringify(start), encoding: 'utf8' });
    expect([h.status, h.stdout, h.stderr]).toEqual([0, '', '']);
    expect(sb.json(['list', '--agent', 'cline']).turns.map((t: any) => [t.agent, t.session])).toEqual([['cline', 's1']]);

    expect(sb.tb(['init', 'cline', '--remove']).stdout).toBe(`removed takeback hooks from ${dir}\n`);
    expect(fs.existsSync(sb.abs('.cline'))).toBe(false);
  });

  it("the user's own programs stay: ours goes under the next free name, and --remove leaves theirs; every name taken is refused", () => {
    const sb = sandbox();
    const dir = sb.abs('.cline/hooks');
    sb.write('.cline/hooks/PreToolUse', '#!/bin/sh\necho mine >> /tmp/never\n', 0o755);
    expect(sb.tb(['init', 'cline']).code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'PreToolUse'), 'utf8')).toBe('#!/bin/sh\necho mine >> /tmp/never\n');
    expect(fs.readFileSync(path.join(dir, 'PreToolUse.sh'), 'utf8')).toMatch(/hook cline/);
    expect(sb.tb(['init', 'cline']).stdout).toMatch(/^nothing to change in /);
    expect(sb.tb(['init', 'cline', '--remove']).code).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['PreToolUse']);

    sb.write('.cline/hooks/PreToolUse.sh', '#!/bin/sh\nexit 0\n', 0o755);
    const r = sb.tb(['init', 'cline']);
    expect([r.code, r.stderr.includes('nothing was changed')]).toEqual([2, true]);
    expect(fs.readdirSync(dir).sort()).toEqual(['PreToolUse', 'PreToolUse.sh']);
  });

  it('--user writes $CLINE_DIR/hooks and leaves the project alone; the program exits 0 and says nothing when takeback is gone', () => {
    const sb = sandbox();
    const env = { ...sb.env, CLINE_DIR: path.join(sb.base, 'cline-dir') };
    expect(sb.tb(['init', 'cline', '--user'], { env }).code).toBe(0);
    expect(fs.readdirSync(path.join(sb.base, 'cline-dir', 'hooks')).sort()).toEqual(EVENTS);
    expect(fs.existsSync(sb.abs('.cline'))).toBe(false);
    expect(sb.tb(['init', 'cline', '--user', '--remove'], { env }).code).toBe(0);
    expect(fs.existsSync(path.join(sb.base, 'cline-dir', 'hooks'))).toBe(false);

    expect(sb.tb(['init', 'cline', '--command', '/nonexistent/takeback hook cline']).code).toBe(0);
    const h = spawnSync(sb.abs('.cline/hooks/PreToolUse'), [], { cwd: sb.ws, input: '{}', encoding: 'utf8' });
    expect([h.status, h.stdout, h.stderr]).toEqual([0, '', '']);
  });
});
