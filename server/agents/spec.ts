/** The names agents are recorded under (`list --agent`). `cli` is the command line itself. */
export type AgentName = 'claude-code' | 'codex' | 'gemini' | 'qwen-code' | 'copilot' | 'cline' | 'opencode' | 'kilo';

/** How a tool call is matched with its end. */
export type Pairing =
  /** By the agent's own tool call id (Claude Code's `tool_use_id`, Codex's call id). */
  | { id: string }
  /** By order within the session (Gemini CLI gives no id): `key` is the tool and a hash of its input. */
  | { order: string };

/** One thing to do for an event. Paths are absolute. */
export type AgentAction =
  | { kind: 'session-start' }
  | { kind: 'turn-begin'; prompt: string | null; agentTurn?: string | null }
  | { kind: 'turn-end'; agentTurn?: string | null }
  /** A file tool (or a patch) is about to change `paths`. */
  | { kind: 'files-begin'; pairing: Pairing; tool: string; paths: string[]; agentTurn?: string | null }
  /** A shell command is about to run. */
  | { kind: 'command-begin'; pairing: Pairing; tool: string; command: string; agentTurn?: string | null }
  /** A tool call (file tool or command) has ended, well or not. */
  | { kind: 'tool-end'; pairing: Pairing; tool: string }
  | { kind: 'ignore'; why: string };

/** The common part of every agent's hook event: who, where. */
export interface EventContext {
  agent: AgentName;
  session: string | null;
  /** The folder the agent works in (the event's `cwd`). */
  cwd: string;
}

/**
 * The fields every supported agent's hook event has in common (Claude Code, Codex CLI and Gemini
 * CLI all send these names): the event, the session, the working folder, the prompt of a turn's
 * first event, and a tool event's tool and input. Each agent's own event type adds to it.
 */
export interface HookEventBase {
  hook_event_name: string;
  session_id?: string;
  cwd?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
}

/** One hook entry as the agent's settings file holds it (`{"type": "command", "command": …}`). */
export interface HookEntry {
  type: string;
  command?: string;
  timeout?: number;
  name?: string;
  [k: string]: unknown;
}

/**
 * What `doctor` found of takeback's hooks for one agent in one settings file the agent reads
 * (`takeback doctor --json`: `agents`; `:checkhealth takeback` shows the same).
 */
export interface HookCheck {
  agent: AgentName;
  /** `workspace`: a file of this workspace (the project's); `user`: the user's, for every folder. */
  scope: 'workspace' | 'user';
  /** The settings file, absolute. */
  file: string;
  /** takeback's hooks there: for every event `init` writes (`all`), for some (`some`), or none. */
  installed: 'all' | 'some' | 'none';
  /**
   * Every takeback command hook there runs this install as `init` writes it now (variables put
   * before it aside), or for an agent that runs a program per event, every program of takeback's
   * there is the script `init` writes now; false for one of an older takeback or another install,
   * null when none is installed.
   */
  current: boolean | null;
  /**
   * The agent will run them as far as its own trust goes: true, false, or null when it asks for no
   * trust or takeback cannot tell (and `trust` says why).
   */
  trusted: boolean | null;
  /** What was found of the agent's trust, for people (absent when the agent asks for none). */
  trust?: string;
}

/** Where one of takeback's hook entries is in a settings file: its event, group and place in the group (from 0). */
export interface HookPlace {
  event: string;
  group: number;
  index: number;
  hook: HookEntry;
}

/**
 * What an agent's {@link AgentSpec.checkHooks} is given: where to look (the workspace root, the
 * folder `doctor` runs in, the environment and home folder the agent would see) and the shared
 * readers, so that an adapter holds only what is its own (which files, what trust).
 */
export interface HookCheckContext {
  workspace: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  /**
   * The check of settings file `file` (absolute) of `scope` without the agent's trust: whether
   * takeback's hooks are there for every event, whether each is current (`trusted`: null), and
   * where they are.
   */
  hooksIn(scope: HookCheck['scope'], file: string): { check: HookCheck; places: HookPlace[] };
  /**
   * The check of hooks folder `dir` (absolute) of `scope`, for an agent that runs a program per
   * event (see {@link AgentSpec.hookProgram}), without the agent's trust: whether takeback's
   * program is there for every event, and whether each is the text `init` writes now.
   */
  programsIn(scope: HookCheck['scope'], dir: string): HookCheck;
  /** File `file` parsed: TOML for a `.toml` name, else JSON with comments; null when missing or not readable as such. */
  readConfig(file: string): unknown;
}

/**
 * What takeback knows of one agent: the hook events it listens to, how its settings file holds a
 * hook, where that file is, and what each event means (as {@link AgentAction}s). One spec per
 * agent (claude-code.ts, codex.ts, gemini.ts); the hook runner and `init` are shared.
 */
export interface AgentSpec<E extends { hook_event_name: string }> {
  name: AgentName;
  /** The events to hook, each with its tool matcher where one applies. */
  events: { event: string; matcher?: string }[];
  /** The hook entry that runs `command` (timeouts in the agent's unit: seconds, or ms for Gemini). */
  hookEntry(command: string): HookEntry;
  /**
   * The settings file that holds hooks: the project's, relative to the workspace root, and the
   * user's, from the environment and the home folder.
   */
  settingsFile: {
    project: string[];
    user: (env: NodeJS.ProcessEnv, home: string) => string[];
    /**
     * Where the project file is: under the workspace root (the git top), or under the folder
     * `init` runs in (`cwd`: Gemini CLI reads only `<cwd>/.gemini/settings.json`).
     */
    projectDir: 'workspace' | 'cwd';
    /** The agent reads the file as JSON with comments (Gemini CLI): `init` keeps them. */
    jsonc?: boolean;
    /**
     * `init --remove` deletes the file when it leaves it an empty object, and then the folders
     * above it that are left empty (below the workspace root, or the first part of the user's
     * path): what init made and nothing else is left behind.
     */
    dropEmpty?: boolean;
    /**
     * Top-level members the agent itself writes into a settings file it loads (Qwen Code's
     * `$version`, its format's number): with `dropEmpty`, a file left holding only these is
     * empty of anything of the user's or takeback's, and goes too.
     */
    agentMembers?: string[];
  };
  /**
   * For an agent that runs a program per event, found by the event's name in a hooks folder
   * (Cline CLI), instead of reading hooks from a settings file: the program's text that runs
   * `command`. `settingsFile` then names that folder, and `init` writes one program per event of
   * `events` there (see hook-programs.ts).
   */
  hookProgram?: (command: string) => string;
  /**
   * The event as takeback reads it, from the JSON the agent sent, when the agent does not name
   * its events `hook_event_name` (Cline CLI: `hookName`); null when it is no event.
   */
  parse?: (value: unknown) => E | null;
  /**
   * The agent loads a plugin instead of running hook commands (opencode, Kilo Code): `settingsFile`
   * is where takeback's plugin goes, and `init` copies it there (agents/opencode-install.ts)
   * instead of merging hook entries.
   */
  plugin?: true;
  /** What the user must still do before the agent runs the hooks (said after `init`; `user`: `--user`), if anything. */
  setupNote?: (user: boolean) => string;
  /**
   * `doctor`: takeback's hooks for this agent in each settings file it reads for this workspace
   * and for the user, with its trust where it asks for one. Reads files only; never throws.
   */
  checkHooks(ctx: HookCheckContext): HookCheck[];
  /** Who and where: the agent, its session, its working folder (`fallbackCwd` when the event has none). */
  context(ev: E, fallbackCwd: string): EventContext;
  /** What the event means. Pure: reads the event only (a patch's paths come from its text). */
  actions(ev: E, ctx: EventContext): AgentAction[];
}

/**
 * The hook events of an agent that takes Claude Code's (Claude Code, Qwen Code, Copilot CLI):
 * SessionStart, UserPromptSubmit and Stop, and PreToolUse, PostToolUse and PostToolUseFailure
 * for the tools `matcher` names (a `|`-separated list of tool names).
 */
export function claudeShapedEvents(matcher: string): { event: string; matcher?: string }[] {
  return [
    { event: 'SessionStart' },
    { event: 'UserPromptSubmit' },
    { event: 'PreToolUse', matcher },
    { event: 'PostToolUse', matcher },
    { event: 'PostToolUseFailure', matcher },
    { event: 'Stop' },
  ];
}
