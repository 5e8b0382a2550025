// The recorded hook events of each agent (test/fixtures/<agent>-events/): one payload of each
// event kind and tool, and a whole session, with the folders of the run replaced by
// placeholders. The harnesses compare the shapes (field names) of what the pinned version
// sends against them, and rewrite them when asked (UPDATE_<AGENT>_FIXTURES=1).
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './agent-bin.js';

/** Field names, recursively into objects (not arrays' items), for comparing shapes. */
export function shape(v: any): any {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, shape(v[k])]),
  );
}

/** The `nth` event (default the first) for which `pred` holds. */
type Find = (pred: (e: any) => boolean, nth?: number) => any;
/** A predicate: the event is `name` (and of `tool`, if given). */
type Ev = (name: string, tool?: string) => (e: any) => boolean;

/**
 * One event per fixture name: "session-start" and "session-start-resume" (every agent's
 * SessionStart has a source "startup" or "resume"), then those `pick` chooses with `find` and
 * `ev`. Throws if one is missing.
 */
export function pickEvents(events: any[], pick: (find: Find, ev: Ev) => Record<string, any>): Record<string, any> {
  const find: Find = (pred, nth = 0) => events.filter(pred)[nth];
  const ev: Ev = (name, tool) => (e) => e.hook_event_name === name && (tool === undefined || e.tool_name === tool);
  const out = {
    'session-start': find((e) => e.hook_event_name === 'SessionStart' && e.source === 'startup'),
    'session-start-resume': find((e) => e.hook_event_name === 'SessionStart' && e.source === 'resume'),
    ...pick(find, ev),
  };
  for (const [k, v] of Object.entries(out)) if (!v) throw new Error(`no event for fixture ${k}`);
  return out;
}

export interface FixtureCheck {
  /**
   * The agent's command name, e.g. "claude": its fixtures are in test/fixtures/claude-events/,
   * UPDATE_CLAUDE_FIXTURES=1 rewrites them, and messages say "[claude-harness] claude ...".
   */
  agent: string;
  /** The version that ran, and the one the fixtures are of. */
  version: string | undefined;
  pinned: string;
  /** Every event of the session. */
  events: any[];
  /** One event per fixture name (see pickEvents). */
  pick: (events: any[]) => Record<string, any>;
  /** Text to replace in the fixtures written ([what, placeholder], in order), e.g. the workspace's path. */
  placeholders: () => [string, string][];
}

/** The folder of an agent's fixtures, and the variable that has them rewritten. */
const fixturesOf = (agent: string) => ({
  dir: path.join(REPO_ROOT, 'test', 'fixtures', `${agent}-events`),
  updateVar: `UPDATE_${agent.toUpperCase()}_FIXTURES`,
});

/**
 * Rewrites the fixtures if UPDATE_<AGENT>_FIXTURES is set; then, for the pinned version only,
 * expects every picked event to have the shape of its fixture (any other version: a warning,
 * nothing compared).
 */
export function checkFixtureShapes(c: FixtureCheck): void {
  const { dir, updateVar } = fixturesOf(c.agent);
  if (process.env[updateVar]) writeFixtures(c);
  if (c.version !== c.pinned) {
    console.warn(`[${c.agent}-harness] ${c.agent} ${c.version} is not the pinned ${c.pinned}: fixture shapes not compared`);
    return;
  }
  for (const [name, e] of Object.entries(c.pick(c.events))) {
    const file = path.join(dir, `${name}.json`);
    expect(fs.existsSync(file), `${file} is missing (${updateVar}=1 writes it)`).toBe(true);
    expect(shape(e), name).toEqual(shape(JSON.parse(fs.readFileSync(file, 'utf8'))));
  }
}

/** Writes `<name>.json` for each picked event and the whole session.jsonl, placeholders put in. */
function writeFixtures(c: FixtureCheck): void {
  const { dir } = fixturesOf(c.agent);
  const placeholders = c.placeholders();
  const normalize = (e: any) => JSON.parse(placeholders.reduce((text, [what, by]) => text.split(what).join(by), JSON.stringify(e)));
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, e] of Object.entries(c.pick(c.events))) fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(normalize(e), null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'session.jsonl'), c.events.map((e) => JSON.stringify(normalize(e))).join('\n') + '\n');
  console.info(`[${c.agent}-harness] wrote fixtures to ${dir}`);
}
