import type { Engine } from '../core/engine.js';
import type { DaemonStatus } from '../daemon/status.js';
import type { JournalHealth } from '../service/doctor.js';
import { VERSION } from './self.js';

/** What `takeback doctor` reports: the journal's health (service/doctor.ts) and the capture daemon's. Sizes in bytes. */
export type DoctorReport = Omit<JournalHealth, 'problems'> & {
  /** The capture daemon (`takeback hook-daemon`): its socket, and the http hook ports it serves. */
  daemon: DaemonStatus;
  problems: string[];
};

/**
 * The doctor's report on `engine`'s workspace: the journal's health, with the problems found
 * outside it (a capture daemon for http hooks gone, Claude Code's hooks out of order) among its own.
 */
export async function doctorReport(engine: Engine): Promise<DoctorReport> {
  const { journalHealth } = await import('../service/doctor.js');
  const { daemonStatus } = await import('../daemon/status.js');
  const { hookProblems } = await import('../agents/http-hooks.js');
  const { claudeCode } = await import('../agents/claude-code.js');
  const daemon = daemonStatus(engine.home);
  const outside: string[] = [];
  for (const h of daemon.http) {
    if (!h.alive) outside.push(`the capture daemon for http hooks on port ${h.port} (pid ${h.pid}) is gone: hooks run in-process until the next one starts it`);
  }
  outside.push(...hookProblems(claudeCode, engine.root, engine.home));
  const { problems, ...health } = journalHealth(engine, VERSION, outside);
  return { ...health, daemon, problems };
}
