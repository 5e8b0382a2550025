import { Option, type Command } from 'commander';
import { TakebackError } from '../../core/errors.js';
import { findWorkspaceRoot, realFolder } from '../../core/workspace.js';
import type { CommandContext } from '../context.js';
import { print } from '../output.js';
import { BIN, hookCommandOf, PACKAGE_ROOT, selfCommand } from '../self.js';

/** `takeback init <agent|editor>`: takeback's hooks in an agent's settings, or its sidecar in an editor's config. */
export function registerInit(p: Command, ctx: CommandContext): void {
  p.command('init')
    .description("add takeback's hooks to an agent's settings, or its sidecar to an editor's config")
    .argument('<agent>', 'claude-code | codex | gemini | qwen-code | copilot | cline | opencode | kilo | helix | jetbrains | vscode')
    .option('--user', "the user's settings (~/.claude/settings.json, $CODEX_HOME/hooks.json, ~/.gemini/settings.json, ~/.qwen/settings.json, ~/.copilot/hooks, ~/.cline/hooks, ~/.config/opencode/plugins/) instead of the project's")
    .option('--shared', "claude-code: the project's shared .claude/settings.json (committed: hooks the whole team) instead of the personal .claude/settings.local.json")
    .option('--remove', 'take out exactly what init added (vscode: uninstall the extension)')
    .option('--http', 'claude-code: http hooks to a capture daemon (a few ms a hook), each with a command hook that takes over when none runs; in .claude/settings.local.json')
    .option('--port <N>', 'claude-code --http: the loopback port (default: 29470 + uid mod 1000)')
    .option('--config-dir <DIR>', "helix: the folder of Helix's languages.toml (default: $XDG_CONFIG_HOME/helix)")
    .option('--hx <PATH>', 'helix: the Helix to ask for its languages (default: hx on PATH)')
    .option('--dir <DIR>', 'jetbrains: where to write the LSP4IJ template folder')
    .addOption(new Option('--command <TEXT>', 'the hook command to write (helix: the server program)').hideHelp())
    .action(async (agent: string, o: { user?: boolean; shared?: boolean; remove?: boolean; http?: boolean; port?: string; command?: string; configDir?: string; hx?: string; dir?: string }, cmd: Command) => {
      const { EDITORS } = await import('../../editors/registry.js');
      const editor = EDITORS[agent];
      if (editor) {
        print(await editor.init(o, { bin: BIN, packageRoot: PACKAGE_ROOT, serveCommand: selfCommand('serve') }));
        return ctx.done(0);
      }
      const { AGENTS } = await import('../../agents/registry.js');
      const { initHooks } = await import('../../agents/http-hooks.js');
      const { defaultHttpPort } = await import('../../daemon/http-address.js');
      const { takebackHome } = await import('../../core/config.js');
      const spec = AGENTS[agent];
      if (!spec) throw new TakebackError('usage', `unknown agent or editor ${agent} (known: ${[...Object.keys(AGENTS), ...Object.keys(EDITORS)].join(', ')})`);
      const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
      const dir = workspace ?? process.cwd();
      const root = spec.settingsFile.projectDir === 'cwd' ? realFolder(dir) : findWorkspaceRoot(dir);
      if (o.port !== undefined && !o.http) throw new TakebackError('usage', '--port goes with --http');
      const port = o.port === undefined ? defaultHttpPort() : /^\d+$/.test(o.port) ? Number(o.port) : NaN;
      if (spec.plugin && o.http) throw new TakebackError('usage', `--http: only Claude Code takes http hooks (not ${agent})`);
      // An agent that loads a plugin gets takeback's plugin file where it loads plugins from.
      const plugin = spec.plugin ? await import('../../agents/opencode-install.js') : null;
      const { settingsPath } = await import('../../agents/hooks-file.js');
      const results = plugin ? plugin.installPlugin(agent, settingsPath(spec, root, Boolean(o.user)), o.remove) : initHooks(spec, {
        workspace: root,
        user: Boolean(o.user),
        // `--command TEXT` (tests): the text as it is, after the assignments the hook is given.
        command: o.command === undefined ? hookCommandOf(agent, spec) : (env) => `${env}${o.command}`,
        shared: o.shared,
        remove: o.remove,
        http: o.http,
        port,
        home: takebackHome(),
      });
      // The files changed; when none was, the first one looked at (where init writes).
      const changed = results.filter((r) => r.changed);
      for (const r of changed.length > 0 ? changed : results.slice(0, 1)) {
        const what = spec.plugin ? (r.action === 'removed' ? "removed takeback's plugin" : "installed takeback's plugin as") : r.action === 'removed' ? 'removed takeback hooks from' : 'added takeback hooks to';
        print(`${r.changed ? what : 'nothing to change in'} ${r.file}\n`);
      }
      if (!o.remove && agent === 'claude-code' && !o.user && !o.shared) print("in Claude Code's settings for you alone (kept out of git); `--shared` writes the team's .claude/settings.json instead\n");
      if (!o.remove && o.http) print(`http hooks to 127.0.0.1:${port}: the first hook starts the capture daemon; until it runs, and whenever it does not, the hooks run in-process\n`);
      if (!o.remove && spec.setupNote) print(`${spec.setupNote(Boolean(o.user))}\n`);
      ctx.done(0);
    });
}
