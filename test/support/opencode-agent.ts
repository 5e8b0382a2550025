// Drives the real opencode (`opencode run`) and the real Kilo Code CLI (`kilo run`, built on
// opencode) against the scripted stand-in for the Anthropic Messages API of ./model-stub.ts on
// 127.0.0.1, with a private HOME and no other network, so that end-to-end tests run real sessions
// whose real tools (write, edit, bash) change real files and whose real plugins see them.
//
// Install the pinned CLIs with scripts/install-opencode.sh (into .cache/opencode and .cache/kilo).
//
// The model is a provider of the run's config (passed whole in OPENCODE_CONFIG_CONTENT, or
// KILO_CONFIG_CONTENT): the `@ai-sdk/anthropic` package, which both ship, with `options.baseURL`
// at the stub. At start each CLI installs its own plugin package into every config folder it reads
// (`.opencode/`, `.kilo/`): the npm registry it asks is the stub too, whose "not found" makes that
// fail at once (with no registry at all it retries for about a minute). A second turn of the
// same session is a second run with `--continue`.
import fs from 'node:fs';
import path from 'node:path';
import { agentBin, describeAgentRun, hermeticEnv, runAgentProcess, type AgentBin, type AgentRun } from './agent-bin.js';

export { REPO_ROOT } from './agent-bin.js';

/** One CLI of the opencode family: how it is found, what takeback calls it, its config and folder names. */
export interface OpencodeFlavor {
  bin: AgentBin;
  /** takeback's name for it (`init NAME`, `list --agent NAME`). */
  agent: 'opencode' | 'kilo';
  /** Its variables' prefix: OPENCODE_ or KILO_. */
  envPrefix: string;
  /** Its project folder: `.opencode` or `.kilo`. */
  projectDir: string;
  /** The version scripts/install-opencode.sh installs. */
  pinned: string;
}

const lastWord = (out: string) => out.trim().split('\n').pop()?.trim().split(/\s+/)[0];

/** opencode (`opencode-ai`), in .cache/opencode; TAKEBACK_REQUIRE_AGENTS=1 requires it. */
export const OPENCODE: OpencodeFlavor = {
  bin: agentBin({ name: 'opencode', envVar: 'OPENCODE', requireVars: ['TAKEBACK_REQUIRE_AGENTS'], parseVersion: lastWord }),
  agent: 'opencode',
  envPrefix: 'OPENCODE_',
  projectDir: '.opencode',
  pinned: '1.18.33',
};

/** The Kilo Code CLI (`@kilocode/cli`), in .cache/kilo; TAKEBACK_REQUIRE_AGENTS=1 requires it. */
export const KILO: OpencodeFlavor = {
  bin: agentBin({ name: 'kilo', envVar: 'KILO', requireVars: ['TAKEBACK_REQUIRE_AGENTS'], parseVersion: lastWord }),
  agent: 'kilo',
  envPrefix: 'KILO_',
  projectDir: '.kilo',
  pinned: '7.7.7',
};

/** The model name the config offers (the stub answers any). */
export const OPENCODE_MODEL = 'claude-sonnet-4-5';

export interface RunOpencodeOptions {
  flavor: OpencodeFlavor;
  bin: string;
  /** The project folder (the tools' cwd). */
  cwd: string;
  prompt: string;
  /** The model stub's URL (./model-stub.ts: `http://127.0.0.1:PORT`). */
  baseUrl: string;
  /** A private HOME (its config, data and state folders are under it). */
  home: string;
  /** A further turn of the newest session (`--continue`). */
  continueSession?: boolean;
  /** Kill the run after this long (default 300 s: Kilo Code took 80 s for a turn here under load). */
  timeoutMs?: number;
  /** Extra environment (TAKEBACK_HOME for the plugin); applied last, undefined deletes. */
  env?: Record<string, string | undefined>;
}

/**
 * The run's whole config: the stub as the only provider and model, every permission granted
 * (`run` asks no one), no sharing, no update.
 */
export function opencodeConfig(baseUrl: string): object {
  return {
    provider: {
      stub: {
        npm: '@ai-sdk/anthropic',
        name: 'Scripted stand-in',
        options: { baseURL: `${baseUrl}/v1`, apiKey: 'sk-ant-test-stub' },
        models: { [OPENCODE_MODEL]: { name: 'stub' } },
      },
    },
    model: `stub/${OPENCODE_MODEL}`,
    permission: 'allow',
    share: 'disabled',
    autoupdate: false,
  };
}

/** The environment of a hermetic, offline run: a private HOME, the config, everything optional off. */
export function opencodeEnv(opts: Pick<RunOpencodeOptions, 'flavor' | 'baseUrl' | 'home' | 'env'>): NodeJS.ProcessEnv {
  const p = opts.flavor.envPrefix;
  return hermeticEnv(
    opts.home,
    {
      TMPDIR: path.join(opts.home, 'tmp'),
      [`${p}CONFIG_CONTENT`]: JSON.stringify(opencodeConfig(opts.baseUrl)),
      [`${p}DISABLE_MODELS_FETCH`]: '1',
      [`${p}DISABLE_AUTOUPDATE`]: '1',
      [`${p}DISABLE_LSP_DOWNLOAD`]: '1',
      [`${p}DISABLE_DEFAULT_PLUGINS`]: '1',
      [`${p}DISABLE_SHARE`]: '1',
      // Kilo's own: no background daemon (plugins then run in the `kilo run` process), no telemetry.
      ...(opts.flavor.agent === 'kilo' ? { KILO_NO_DAEMON: '1', KILO_TELEMETRY_LEVEL: 'off', KILO_DISABLE_SESSION_INGEST: '1', KILO_DISABLE_CODEBASE_INDEXING: '1' } : {}),
      // Its start-up install of its plugin package asks the stub, which says "not found" at once.
      NPM_CONFIG_REGISTRY: `${opts.baseUrl}/npm/`,
      NO_PROXY: '127.0.0.1,localhost',
      NO_COLOR: '1',
    },
    opts.env,
  );
}

/** Runs `opencode run PROMPT` (or `kilo run`) once: one turn. Resolves when it exits; never rejects for a failed run. */
export async function runOpencode(opts: RunOpencodeOptions): Promise<AgentRun> {
  fs.mkdirSync(path.join(opts.home, 'tmp'), { recursive: true });
  const args = ['run', opts.prompt, ...(opts.continueSession ? ['--continue'] : [])];
  return runAgentProcess(opts.bin, args, { cwd: opts.cwd, env: opencodeEnv(opts), timeoutMs: opts.timeoutMs ?? 300_000 });
}

/**
 * Deletes what the CLI itself wrote into its project folder at start (its plugin package's
 * `package.json`, lock file, `node_modules`, and the `.gitignore` that lists them), keeping the
 * plugins: git and takeback both leave those files out (that `.gitignore`), so the workspace
 * then holds exactly what the tools made.
 */
export function removeAgentOwnFiles(work: string, flavor: OpencodeFlavor): void {
  const dir = path.join(work, flavor.projectDir);
  for (const name of ['.gitignore', 'package.json', 'package-lock.json', 'bun.lock', 'node_modules']) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
}

/** A short description of a run for assertion messages. */
export function describeOpencodeRun(flavor: OpencodeFlavor, r: AgentRun): string {
  return describeAgentRun(flavor.bin.name, r);
}
