// A hook for tests: a tiny node script that appends each event's stdin JSON, as one line,
// to a log file (used by every agent's driver); and the .claude/settings.json that installs it
// for the events takeback uses.
import fs from 'node:fs';
import path from 'node:path';

/** The tool events' matcher takeback installs. */
export const FILE_TOOLS_MATCHER = 'Write|Edit|MultiEdit|NotebookEdit|Bash';

const LOGGER = `'use strict';
// Appends the hook event on stdin to the file named by argv[2], as one JSON line (with
// "_via": argv[3] first, if given). Exits 0 and prints nothing (stdout or stderr), whatever
// happens: a hook must never block the agent, and any text of a hook may be shown to the user.
const fs = require('fs');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  let line;
  try { line = JSON.parse(input); } catch { line = { unparsed: input }; }
  if (process.argv[3]) line = { _via: process.argv[3], ...line };
  try { fs.appendFileSync(process.argv[2], JSON.stringify(line) + '\\n'); } catch {}
});
`;

/** The logger script, written to disk, and its log. */
export interface HookLogger {
  /** The script: `<dir>/log-hook.cjs`. */
  script: string;
  /** The log: `<dir>/<name>.jsonl`. */
  logFile: string;
  /** The command line of a hook that runs the logger (node, script, log and `via` if given, each JSON-quoted). */
  command(via?: string): string;
  /** The events logged so far, in order. */
  read(): any[];
}

/** Writes the logger script into `dir` (keep it outside the workspace), logging to `<dir>/<name>.jsonl`. */
export function writeHookLogger(dir: string, name = 'hooks'): HookLogger {
  fs.mkdirSync(dir, { recursive: true });
  const script = path.join(dir, 'log-hook.cjs');
  const logFile = path.join(dir, `${name}.jsonl`);
  fs.writeFileSync(script, LOGGER);
  return {
    script,
    logFile,
    command: (via) => [process.execPath, script, logFile, ...(via ? [via] : [])].map((a) => JSON.stringify(a)).join(' '),
    read() {
      if (!fs.existsSync(logFile)) return [];
      return fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
    },
  };
}

export interface HookLog {
  /** The settings object for runClaude({ settings }). */
  settings: { hooks: Record<string, unknown[]> };
  logFile: string;
  /** The events logged so far, in order. */
  read(): any[];
}

/**
 * Writes the logger script into `dir` (keep it outside the workspace) and returns settings
 * whose hooks (SessionStart, UserPromptSubmit, Stop, and PreToolUse, PostToolUse,
 * PostToolUseFailure for the file tools and Bash) all run it.
 */
export function makeHookLog(dir: string): HookLog {
  const logger = writeHookLogger(dir);
  const command = logger.command();
  const entry = (matcher?: string) => [
    { ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command, timeout: 30 }] },
  ];
  return {
    settings: {
      hooks: {
        SessionStart: entry(),
        UserPromptSubmit: entry(),
        PreToolUse: entry(FILE_TOOLS_MATCHER),
        PostToolUse: entry(FILE_TOOLS_MATCHER),
        PostToolUseFailure: entry(FILE_TOOLS_MATCHER),
        Stop: entry(),
      },
    },
    logFile: logger.logFile,
    read: logger.read,
  };
}
