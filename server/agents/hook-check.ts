import { readFileSync } from 'node:fs';
import * as jsoncParser from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { ourHookPrograms } from './hook-programs.js';
import { isCurrentHook, ourHookPlaces } from './hooks-file.js';
import type { AgentSpec, HookCheck, HookCheckContext } from './spec.js';

type AnySpec = AgentSpec<{ hook_event_name: string }>;

/** File `file` parsed: TOML for a `.toml` name, else JSON with comments; null when missing or unreadable. */
function readConfig(file: string): unknown {
  try {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.toml')) return parseToml(text);
    const errors: jsoncParser.ParseError[] = [];
    const v: unknown = jsoncParser.parse(text, errors, { allowTrailingComma: true });
    return errors.length > 0 ? null : v;
  } catch {
    return null;
  }
}

/**
 * `doctor`'s check of `spec`'s hooks (see {@link AgentSpec.checkHooks}): the context an adapter
 * is given, with `commands` the hook commands `init` writes now for it (cli/self.ts: the one for
 * a file a team may commit and the one for a person's own file), so that a hook that runs
 * anything else is not current.
 */
export function checkAgentHooks(spec: AnySpec, where: { workspace: string; cwd: string; env: NodeJS.ProcessEnv; home: string; commands: readonly string[] }): HookCheck[] {
  const ctx: HookCheckContext = {
    workspace: where.workspace,
    cwd: where.cwd,
    env: where.env,
    home: where.home,
    hooksIn(scope, file) {
      const places = ourHookPlaces(spec, file);
      const hooked = new Set(places.map((p) => p.event));
      const installed = places.length === 0 ? 'none' : spec.events.every((e) => hooked.has(e.event)) ? 'all' : 'some';
      const current = places.length === 0 ? null : places.every((p) => where.commands.some((c) => isCurrentHook(spec, p.hook, c)));
      return { check: { agent: spec.name, scope, file, installed, current, trusted: null }, places };
    },
    programsIn(scope, dir) {
      const each = where.commands.map((c) => ourHookPrograms(spec, dir, c));
      const current = each.some((r) => r.current === true) ? true : (each[0]?.current ?? null);
      return { agent: spec.name, scope, file: dir, installed: each[0]?.installed ?? 'none', current, trusted: null };
    },
    readConfig,
  };
  try {
    return spec.checkHooks(ctx);
  } catch {
    return [];
  }
}
