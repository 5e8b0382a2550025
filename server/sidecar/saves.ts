import { recordSave } from '../core/capture/person.js';
import type { Session } from './session.js';
import { waitsForSave } from './undo-through-editor.js';

/*
 * The person's saves. A document saved after it changed in the editor, that no step through the
 * editor waits for (whose save is that step's, recorded by it), holds the person's work: it is
 * recorded as theirs (source `person`, core/capture/person.ts), so that it is never blamed on the
 * agent (a command running meanwhile, a turn's "changed during this turn") nor taken by a turn's
 * undo. What an agent or an undo wrote is already in the snapshot index, so a save of it records
 * nothing.
 */

/** On didSave of `path`: records the save as the person's when it is theirs, and tells the client. */
export function onSave(s: Session, path: string): void {
  if (!s.docs.takeChanged(path) || waitsForSave(s, path)) return;
  const set = s.ws.journal.write(() => recordSave(s.ws, path, s.docs.editor));
  if (set) s.client.journalChanged('recorded');
}
