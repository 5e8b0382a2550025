import type { Workspace } from '../core/open-workspace.js';
import type { ClientAbilities, EditorClient } from './client.js';
import type { Documents } from './documents.js';

/** Everything a handler needs about one client connection, made at `initialize`. */
export interface Session {
  ws: Workspace;
  docs: Documents;
  client: EditorClient;
  abilities: ClientAbilities;
  options: {
    /** How long to wait for open documents to show an applied edit (ms). */
    verifyTimeoutMs: number;
    /** How often to look for journal changes by other processes (ms). */
    watchIntervalMs: number;
  };
}
