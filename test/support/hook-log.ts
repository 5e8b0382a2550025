// A hook for tests: a tiny node script that appends each event's stdin JSON, as one line,
// to a log file; and the .claude/settings.json that installs it for the events takeback uses.
import fs from 'node:fs';
import path from 'node:path';

/** The tool events' matcher takeback installs. */
export const FILE_TOOLS_MATCHER = 'Write|Edit|MultiEdit|NotebookEdit|Bash';

const LOGGER = `'use strict';
// Appends the hook event on stdin to the file named by argv[2], as one JSON line.
// Exits 0 and prints nothing, whatever happens: a hook must never block the agent.
const fs = require('fs');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  let line;
  try { line = JSON.stringify(JSON.parse(input)); } catch { line = JSON.stringify({ unparsed: input }); }
  try { fs.appendFileSync(process.argv[2], line + '\\n'); } catch {}
});
`;

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
  fs.mkdirSync(dir, { recursive: true });
  const script = path.join(dir, 'log-hook.cjs');
  const logFile = path.join(dir, 'hooks.jsonl');
  fs.writeFileSync(script, LOGGER);
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(script)} ${JSON.stringify(logFile)}`;
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
    logFile,
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
