// Every hook command `init` writes, for every agent and every way of finding takeback (the
// `takeback` on PATH; this install's hook client by absolute path in a person's own settings
// file; this install by absolute path), is harmless where takeback is not installed: a real shell
// (sh, as Claude Code and Codex run hooks; bash, as Gemini CLI does) with a PATH that has no
// takeback runs it, and it exits 0 saying nothing. Where takeback is there, the agent gets what
// takeback gives: its output and its exit code, untouched.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, sandbox, type Sandbox } from './support/takeback.js';

/** This install's hook client (`npm ci` builds it). */
const CLIENT = path.join(REPO_ROOT, 'native', 'build-hook', 'takeback-hook');

// `personal`: the project file init writes is one person's (Claude Code's settings.local.json).
const AGENTS = [
  { agent: 'claude-code', file: ['.claude', 'settings.local.json'], shells: ['sh', 'bash'], turn: 'UserPromptSubmit', personal: true },
  { agent: 'codex', file: ['.codex', 'hooks.json'], shells: ['sh', 'bash'], turn: 'UserPromptSubmit', personal: false },
  { agent: 'gemini', file: ['.gemini', 'settings.json'], shells: ['bash', 'sh'], turn: 'BeforeAgent', personal: false },
] as const;

/** Every command hook in the settings file `file`, with its event. */
function commandsIn(file: string): { event: string; command: string }[] {
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  return Object.entries<any[]>(s.hooks ?? {}).flatMap(([event, groups]) =>
    groups.flatMap((g) => (g.hooks as any[]).filter((h) => h.type === 'command').map((h) => ({ event, command: h.command as string }))),
  );
}

/** A folder with a `takeback` link to this install's script and a `node` link to this Node: a PATH on which takeback is installed. */
function installedPath(sb: Sandbox): string {
  const dir = path.join(sb.base, 'installed-bin');
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(path.join(dir, 'takeback'))) fs.symlinkSync(BIN, path.join(dir, 'takeback'));
  if (!fs.existsSync(path.join(dir, 'node'))) fs.symlinkSync(process.execPath, path.join(dir, 'node'));
  return dir;
}

/** A folder with only `node`: a PATH on which takeback is not installed. */
function barePath(sb: Sandbox): string {
  const dir = path.join(sb.base, 'bare-bin');
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(path.join(dir, 'node'))) fs.symlinkSync(process.execPath, path.join(dir, 'node'));
  return dir;
}

/** Runs `command` as an agent does: `shell -c`, a turn's first event (`turn`) on stdin, with `PATH` = `pathDirs` (and the sandbox's choice of capture daemon, off unless the run asks for one). */
function runHook(sb: Sandbox, shell: string, command: string, pathDirs: string, home = sb.home, turn = 'UserPromptSubmit') {
  const ev = { hook_event_name: turn, session_id: 's1', cwd: sb.ws, prompt: 'p' };
  return spawnSync(`/bin/${shell}`, ['-c', command], { cwd: sb.ws, env: { PATH: pathDirs, HOME: sb.userHome, TAKEBACK_HOME: home, TAKEBACK_HOOK_DAEMON: sb.env.TAKEBACK_HOOK_DAEMON }, input: JSON.stringify(ev), encoding: 'utf8' });
}

/** Whether a takeback process ran with `home` as its home: it keeps a journal or a log there. */
const ranIn = (home: string) => fs.existsSync(path.join(home, 'workspaces')) || fs.existsSync(path.join(home, 'logs'));

/** The shell-quoted form of this install's script in a written command (as init writes it). */
const quotedBin = (command: string) => (command.includes(`'${BIN}'`) ? `'${BIN}'` : BIN);

for (const a of AGENTS) {
  describe(`init ${a.agent}: the hook commands are harmless where takeback is not installed`, () => {
    it(a.personal
      ? "takeback on PATH, a person's own file: written as this install's hook client; the client and script gone, every command exits 0 and prints nothing without takeback on PATH and runs it with; as written, the event is recorded"
      : 'takeback on PATH: written as `takeback`; without it on PATH every command exits 0 and prints nothing; with it the event is recorded', () => {
      const sb = sandbox({ git: true });
      const installed = installedPath(sb);
      const r = sb.tb(['init', a.agent], { env: { ...sb.env, PATH: `${installed}:${process.env.PATH}` } });
      expect(r.code, r.stderr).toBe(0);
      const commands = commandsIn(path.join(sb.ws, ...a.file));
      expect(commands.length).toBeGreaterThan(0);
      const fallbackHome = path.join(sb.base, 'fallback-home');
      for (const { event, command } of commands) {
        if (!a.personal) expect(command, event).not.toContain(BIN);
        else {
          expect(command, event).toMatch(new RegExp(`^if \\[ -x '?${CLIENT}'? \\] && \\[ -f '?${BIN}'? \\]; then .*exec '?${CLIENT}'? '?${BIN}'? ${a.agent}; elif command -v takeback `));
          // Uninstalled, or the client not rebuilt: nothing runs, or the takeback on PATH does.
          const gone = command.split(CLIENT).join(path.join(sb.base, 'gone', 'takeback-hook')).split(BIN).join(path.join(sb.base, 'gone', 'takeback.js'));
          for (const shell of a.shells) {
            const missing = runHook(sb, shell, gone, barePath(sb));
            expect([missing.status, missing.stdout, missing.stderr], `${shell}: ${event}: ${gone}`).toEqual([0, '', '']);
          }
          if (event === a.turn) {
            const fallback = runHook(sb, a.shells[0], gone, installed, fallbackHome, a.turn);
            expect([fallback.status, fallback.stdout], event).toEqual([0, '']);
          }
          continue;
        }
        for (const shell of a.shells) {
          const missing = runHook(sb, shell, command, barePath(sb));
          expect([missing.status, missing.stdout, missing.stderr], `${shell}: ${event}: ${command}`).toEqual([0, '', '']);
        }
      }
      expect(ranIn(sb.home), 'takeback never ran').toBe(false);
      if (a.personal) expect(ranIn(fallbackHome), 'the takeback on PATH ran').toBe(true);
      // Installed: the same command runs takeback, which records the turn.
      const present = runHook(sb, a.shells[0], commands.find((c) => c.event === a.turn)!.command, installed, sb.home, a.turn);
      expect([present.status, present.stdout]).toEqual([0, '']);
      expect(sb.json(['list']).turns.map((t: any) => t.agent)).toEqual([a.agent]);
    });

    it('this install by absolute path: the install gone and no takeback on PATH, every command exits 0 and prints nothing', () => {
      const sb = sandbox({ git: true });
      // No takeback on the PATH init sees: it names this node and this script.
      expect(sb.tb(['init', a.agent], { env: { ...sb.env, PATH: barePath(sb) } }).code).toBe(0);
      const commands = commandsIn(path.join(sb.ws, ...a.file));
      for (const { event, command } of commands) {
        expect(command, event).toContain(quotedBin(command));
        // A teammate's machine: the script named there does not exist.
        const elsewhere = command.split(quotedBin(command)).join(`'${path.join(sb.base, 'gone', 'bin', 'takeback.js')}'`);
        for (const shell of a.shells) {
          const missing = runHook(sb, shell, elsewhere, barePath(sb));
          expect([missing.status, missing.stdout, missing.stderr], `${shell}: ${event}: ${elsewhere}`).toEqual([0, '', '']);
        }
        // The install gone but a takeback on PATH: that one runs instead.
        const fallback = runHook(sb, a.shells[0], elsewhere, installedPath(sb), path.join(sb.base, 'fallback-home'), a.turn);
        expect([fallback.status, fallback.stdout], event).toEqual([0, '']);
      }
      expect(ranIn(sb.home), 'takeback never ran from the missing install').toBe(false);
      expect(ranIn(path.join(sb.base, 'fallback-home')), 'the takeback on PATH ran').toBe(true);
    });
  });
}

describe('the hook command keeps what takeback gives the agent', () => {
  it("a takeback that prints and exits non-zero: Claude Code's and Codex's commands pass its output and exit code on unchanged", () => {
    const sb = sandbox();
    const installed = installedPath(sb);
    expect(sb.tb(['init', 'codex'], { env: { ...sb.env, PATH: `${installed}:${process.env.PATH}` } }).code).toBe(0);
    const { command } = commandsIn(path.join(sb.ws, '.codex', 'hooks.json'))[0]!;
    // A stand-in for takeback, first on PATH, that answers as a hook may (JSON on stdout) and exits 3.
    const fake = path.join(sb.base, 'fake-bin');
    fs.mkdirSync(fake);
    fs.writeFileSync(path.join(fake, 'takeback'), '#!/bin/sh\necho \'{"decision":"x"}\'\necho said >&2\nexit 3\n', { mode: 0o755 });
    const r = runHook(sb, 'sh', command, fake);
    expect([r.status, r.stdout, r.stderr]).toEqual([3, '{"decision":"x"}\n', 'said\n']);
  });

  it('init --http: the command hook beside each http hook, and SessionStart, are harmless without takeback too', () => {
    const sb = sandbox({ git: true });
    const installed = installedPath(sb);
    expect(sb.tb(['init', 'claude-code', '--http', '--port', '29999'], { env: { ...sb.env, PATH: `${installed}:${process.env.PATH}` } }).code).toBe(0);
    const commands = commandsIn(path.join(sb.ws, '.claude', 'settings.local.json'));
    expect(commands.map((c) => c.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'StopFailure']);
    for (const { event, command } of commands) {
      for (const shell of ['sh', 'bash']) {
        const r = runHook(sb, shell, command, barePath(sb));
        expect([r.status, r.stdout, r.stderr], `${shell}: ${event}: ${command}`).toEqual([0, '', '']);
      }
    }
  });
});

describe('init replaces its own older commands', () => {
  it('a hook command of an older takeback (no guard, another install) becomes the current one, once per event; --remove takes it out', () => {
    const sb = sandbox();
    const file = path.join(sb.ws, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(file));
    const old = "NODE_EXTRA_CA_CERTS= '/opt/node/bin/node' '/srv/old-takeback/bin/takeback.js' hook codex";
    const theirs = { type: 'command', command: 'echo mine', timeout: 5 };
    fs.writeFileSync(file, `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: old, timeout: 30 }] }, { hooks: [theirs] }] } }, null, 2)}\n`);
    expect(sb.tb(['init', 'codex']).code).toBe(0);
    const s = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(s.hooks.Stop).toHaveLength(2);
    expect(s.hooks.Stop[1].hooks).toEqual([theirs]);
    const [mine] = s.hooks.Stop[0].hooks;
    expect(mine.command).toMatch(/^if .* hook codex; (elif .* )?fi$/);
    expect(mine.command).not.toContain('/srv/old-takeback');
    expect(commandsIn(file).filter((c) => c.command.includes('hook codex')).map((c) => c.event)).toEqual(['Stop', 'SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse']);
    expect(sb.tb(['init', 'codex', '--remove']).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ hooks: { Stop: [{ hooks: [theirs] }] } });
  });
});
