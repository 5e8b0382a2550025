import { homedir } from 'node:os';
import type { HookCheck } from '../agents/spec.js';
import type { Workspace } from '../core/open-workspace.js';
import type { WatcherChoice } from '../core/capture/watch-feed.js';
import type { DaemonStatus } from '../daemon/status.js';
import type { JournalHealth } from '../service/doctor.js';
import { hookCommand, VERSION } from './self.js';

/** What `takeback doctor` reports: the journal's health (service/doctor.ts) and the capture daemon's. Sizes in bytes. */
export type DoctorReport = Omit<JournalHealth, 'problems'> & {
  /** The capture daemon (`takeback hook-daemon`): its socket, and the http hook ports it serves. */
  daemon: DaemonStatus;
  /**
   * The file watcher a capture daemon (or the sidecar) started with this environment would use
   * for this workspace: `watchman` (with the Watchman service's version) where that service
   * answers, in git or not, else `parcel` (@parcel/watcher); `none` where `TAKEBACK_WATCH=0` turns
   * watching off. `why` says why not Watchman (not installed or not answering, or
   * `TAKEBACK_WATCHMAN=0`), or why none.
   */
  watcher: WatcherChoice & { why?: string };
  /**
   * takeback's hooks in every settings file each agent reads for this workspace and for the user
   * (see {@link HookCheck}), files without them included. None installed: no agent is hooked here.
   */
  agents: HookCheck[];
  problems: string[];
};

/**
 * What doctor says when no settings file any agent reads here holds takeback's hooks: every
 * agent `init` knows is named (doctor-hooks.test checks it against the registry).
 */
export const NO_AGENT_HOOKED =
  'no agent is hooked here: run takeback init claude-code (or codex, gemini, qwen-code, copilot, cline, opencode, kilo; --user for every folder)';

/** The `init` that writes (or repairs) the hooks of a check's file: `takeback init codex --user`. */
function initFor(c: HookCheck): string {
  const flag = c.scope === 'user' ? ' --user' : c.agent === 'claude-code' && c.file.endsWith('settings.json') ? ' --shared' : '';
  return `takeback init ${c.agent}${flag}`;
}

/** The problems `doctor` names of the agents' hooks: some events only, another takeback's command, an agent that will not run them. */
export function hookCheckProblems(checks: HookCheck[]): string[] {
  const out: string[] = [];
  for (const c of checks) {
    if (c.installed === 'none') continue;
    if (c.installed === 'some') out.push(`takeback's ${c.agent} hooks in ${c.file} are there for some events only: run \`${initFor(c)}\` again`);
    if (c.current === false) out.push(`takeback's ${c.agent} hooks in ${c.file} run another takeback than this one, or an older command: run \`${initFor(c)}\` again`);
    if (c.trusted === false) out.push(`${c.agent} will not run takeback's hooks in ${c.file}: ${c.trust ?? 'not trusted'}`);
  }
  return out;
}

/**
 * The doctor's report on workspace `ws`: the journal's health, with the problems found
 * outside it (a capture daemon for http hooks gone, Claude Code's hooks out of order) among its own.
 */
export async function doctorReport(ws: Workspace): Promise<DoctorReport> {
  const { journalHealth } = await import('../service/doctor.js');
  const { daemonStatus } = await import('../daemon/status.js');
  const { hookProblems } = await import('../agents/http-hooks.js');
  const { claudeCode } = await import('../agents/claude-code.js');
  const { AGENTS } = await import('../agents/registry.js');
  const { checkAgentHooks } = await import('../agents/hook-check.js');
  const { chooseWatcher, WATCH_VAR } = await import('../core/capture/watch-feed.js');
  const { WATCHMAN_VAR } = await import('../core/scan/watchman.js');
  const daemon = daemonStatus(ws.home);
  const chosen = await chooseWatcher(process.env);
  // Watchman watches every workspace, in git or not, where its service answers.
  const watcher: DoctorReport['watcher'] =
    chosen.kind === 'watchman'
      ? chosen
      : chosen.kind === 'none'
        ? { ...chosen, why: `${WATCH_VAR}=${process.env[WATCH_VAR]}` }
        : { ...chosen, why: process.env[WATCHMAN_VAR] === '0' ? `${WATCHMAN_VAR}=0` : 'no Watchman service answers (watchman not installed, or not running and not startable)' };
  const outside: string[] = [];
  for (const h of daemon.http) {
    if (!h.alive) outside.push(`the capture daemon for http hooks on port ${h.port} (pid ${h.pid}) is gone: hooks run in-process until the next one starts it`);
  }
  outside.push(...hookProblems(claudeCode, ws.root, ws.home));
  const env = process.env;
  const agents = Object.entries(AGENTS).flatMap(([name, spec]) =>
    checkAgentHooks(spec, { workspace: ws.root, cwd: process.cwd(), env, home: env.HOME ?? homedir(), commands: [hookCommand(name, spec), hookCommand(name, spec, '', { personal: true })] }),
  );
  outside.push(...hookCheckProblems(agents));
  const { problems, ...health } = journalHealth(ws, VERSION, outside);
  return { ...health, daemon, watcher, agents, problems };
}
