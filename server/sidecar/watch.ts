import type { Session } from './session.js';
import { checkPending } from './undo-through-editor.js';

/**
 * Notices journal changes made by other processes (an agent's hooks and the command line write
 * the journal directly): SQLite's `PRAGMA data_version` on the server's own connection changes
 * whenever another connection commits, and costs no disk read when nothing did. On a change the
 * client gets `changes/didChange` (reason `external`). The same tick checks undo steps waiting
 * for the editor to save (an editor may save a file it never told us it opened).
 */
export class JournalWatch {
  private timer: NodeJS.Timeout | null = null;
  private version: number;

  constructor(private readonly session: Session, private readonly log: (m: string) => void) {
    this.version = session.ws.journal.dataVersion();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.session.options.watchIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: announce another process's changes, record steps the editor has saved. */
  tick(): void {
    try {
      const v = this.session.ws.journal.dataVersion();
      if (v !== this.version) {
        this.version = v;
        this.session.client.journalChanged('external');
      }
      checkPending(this.session);
    } catch (e) {
      this.log(`takeback: watch: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
