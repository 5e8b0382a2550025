// Drives the real Cline CLI (`cline --json PROMPT`) against the scripted OpenAI-compatible
// stand-in for its model (./openai-chat-stub.ts) on 127.0.0.1, with a private HOME: `cline auth`
// points its `openai-compatible` provider at the stub first. Its real tools (editor,
// run_commands) change real files, and its hook programs (`.cline/hooks/<Event>`) run: Cline
// runs them with a prompt on the command line too, tools auto-approved (its default there).
//
// Install the pinned CLI with scripts/install-cline.sh (into .cache/cline). Each run is a task,
// a session of its own: `--id <session>` (going on with a session) is refused with a prompt on
// the command line (`--json`: "interactive mode is unsupported").
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { agentBin, hermeticEnv, runAgentProcess } from './agent-bin.js';
import type { AgentRun, AgentTurnOptions } from './agent-bin.js';
import type { AgentTools } from './agent-e2e.js';
import { toolCall, toolCalls } from './openai-chat-stub.js';
import { alive, until } from './procs.js';

/** How the cline binary is found (the CLINE variable, .cache/cline, PATH); TAKEBACK_REQUIRE_AGENTS=1 requires it. */
export const CLINE_BIN = agentBin({
  name: 'cline',
  envVar: 'CLINE',
  requireVars: ['TAKEBACK_REQUIRE_AGENTS'],
  parseVersion: (out) => /\d+\.\d+\.\d+/.exec(out)?.[0],
});

/** The model id given to the provider (the stub answers any). */
export const CLINE_MODEL = 'stub-model';

/** Cline's tools as model steps: `editor` makes a file (no old_text) or replaces text in one, `run_commands` runs command lines. */
export const CLINE_TOOLS: AgentTools = {
  write: (file, content, previous) => [toolCalls([toolCall('editor', previous === null ? { path: file, new_text: content } : { path: file, old_text: previous, new_text: content })])],
  edit: (file, old, replacement) => [toolCalls([toolCall('editor', { path: file, old_text: old, new_text: replacement })])],
  shell: (command) => [toolCalls([toolCall('run_commands', { commands: [command] })])],
};

/** Cline's run takes no session: each run is one (see README). */
export type RunClineOptions = Omit<AgentTurnOptions, 'session'>;

function clineEnv(o: RunClineOptions): NodeJS.ProcessEnv {
  return hermeticEnv(o.home, { NO_PROXY: '127.0.0.1,localhost', NO_COLOR: '1', CLINE_TELEMETRY_DISABLED: '1' }, o.env);
}

/** Runs `cline auth` (the stub as the openai-compatible provider), then `cline --json PROMPT` once (one task); resolves when it exits. */
export function runCline(o: RunClineOptions): Promise<AgentRun> {
  const env = clineEnv(o);
  const auth = spawnSync(o.bin, ['auth', '-p', 'openai-compatible', '-k', 'x', '-m', CLINE_MODEL, '-b', o.baseUrl], { cwd: o.cwd, env, encoding: 'utf8', timeout: 60_000 });
  if (auth.status !== 0) throw new Error(`cline auth exited ${auth.status}: ${auth.stdout}${auth.stderr}`);
  return runAgentProcess(o.bin, ['--json', o.prompt], { cwd: o.cwd, env, timeoutMs: o.timeoutMs ?? 120_000 });
}

/**
 * The processes of Cline's hub (`cline --cline-hub-daemon --cwd <work> …`), which a run starts
 * in the background for the folder it works in (in a process group of its own) and which stays
 * when the run ends: their pids, read from /proc.
 */
export function clineHubs(work: string): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const cwd = argv.indexOf('--cwd');
    if (argv.includes('--cline-hub-daemon') && cwd >= 0 && argv[cwd + 1] === work) pids.push(Number(name));
  }
  return pids;
}

/** Ends the hub Cline's runs in `work` started (see {@link clineHubs}): its process group, SIGTERM, then SIGKILL; throws when one is left. */
export async function stopClineHubs(work: string): Promise<void> {
  const pids = clineHubs(work);
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(-pid, sig);
      } catch {
        // Not a group leader, or gone: the process itself.
        try {
          process.kill(pid, sig);
        } catch {
          /* gone */
        }
      }
    }
  };
  signal('SIGTERM');
  try {
    await until('the Cline hub to end', () => pids.every((p) => !alive(p)), 30_000);
  } catch {
    signal('SIGKILL');
    await until('the Cline hub to end after SIGKILL', () => pids.every((p) => !alive(p)), 30_000);
  }
}
