import { homedir } from 'node:os';
import { join } from 'node:path';
import { xdgState } from 'xdg-basedir';

/**
 * Where the journal lives: `$TAKEBACK_HOME`, else `$XDG_STATE_HOME/takeback`, else
 * `~/.local/state/takeback`. Never inside a workspace, so an agent's `rm -rf` cannot take the
 * history with it. A module of its own, with nothing of `node:fs` in it: the hook's forwarding
 * client (server/cli/forward.ts) resolves the same home and must start in a few milliseconds.
 */
export function takebackHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TAKEBACK_HOME) return env.TAKEBACK_HOME;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'takeback');
  return join(xdgState ?? join(homedir(), '.local', 'state'), 'takeback');
}
