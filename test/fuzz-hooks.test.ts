// Malformed hook events, made from the recorded events of each agent (test/fixtures/<agent>-events/)
// by random damage: a field removed, a field's value replaced (wrong types, NUL bytes, paths
// outside the workspace or climbing out of it, very long strings, odd ids), the text cut short,
// wrapped, prefixed with a BOM or with bytes that are not UTF-8. Every one must be answered as a
// hook must: exit 0, nothing on stdout (an agent would read it as the hook's answer), the
// workspace untouched. Afterwards the journal still opens and a valid tool call is recorded.
//
// Runs TAKEBACK_FUZZ_HOOK_EVENTS events (default 330, a third per agent); fast-check's seed is
// printed on a failure. The seed is fixed (20261201) so that CI is repeatable; TAKEBACK_FUZZ_SEED
// runs others.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIXTURES, sandbox, tbAsync, type Sandbox } from './support/takeback.js';
import { readTree, treeDiff } from './support/trees.js';

const EVENTS = Number(process.env.TAKEBACK_FUZZ_HOOK_EVENTS ?? 330);
const SEED = Number(process.env.TAKEBACK_FUZZ_SEED ?? 20261201);
const AGENTS = ['claude-code', 'codex', 'gemini'] as const;
const FIXTURE_DIR: Record<(typeof AGENTS)[number], string> = { 'claude-code': 'claude-events', codex: 'codex-events', gemini: 'gemini-events' };

/** The recorded events of each agent, with the placeholders of the run filled in for `sb`. */
function recorded(sb: Sandbox): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const agent of AGENTS) {
    const dir = path.join(FIXTURES, FIXTURE_DIR[agent]);
    out[agent] = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) =>
        fs
          .readFileSync(path.join(dir, f), 'utf8')
          .replaceAll('${WORKSPACE}', sb.ws)
          .replaceAll('${HOME}', sb.userHome)
          .replaceAll('${CODEX_HOME}', path.join(sb.userHome, '.codex'))
          .replaceAll(/\$\{[A-Z_]+_SLUG\}/g, 'slug'),
      );
  }
  return out;
}

/** Values that break a field: other types, and strings a careless handler would trust. */
const badValue = (sb: Sandbox): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(
      null,
      true,
      0,
      -1,
      1e308,
      '',
      '\0',
      'a\0b',
      '../../../../etc/passwd',
      '/etc/passwd',
      `${sb.ws}/../outside.txt`,
      `${sb.ws}/\0x`,
      'x'.repeat(200_000),
      '\uFEFF{}',
      '\uD800',
      { __proto__: { polluted: true } },
      ['Write', 'Bash'],
      { file_path: 42 },
    ),
  );

/** One damage done to an event's text. */
type Damage =
  | { kind: 'drop'; key: number }
  | { kind: 'replace'; key: number; value: unknown }
  | { kind: 'replace-input'; key: number; value: unknown }
  | { kind: 'cut'; at: number }
  | { kind: 'wrap' }
  | { kind: 'bom' }
  | { kind: 'bytes'; bytes: number[] };

const damageArb = (sb: Sandbox): fc.Arbitrary<Damage> =>
  fc.oneof(
    fc.record({ kind: fc.constant('drop' as const), key: fc.nat() }),
    fc.record({ kind: fc.constant('replace' as const), key: fc.nat(), value: badValue(sb) }),
    fc.record({ kind: fc.constant('replace-input' as const), key: fc.nat(), value: badValue(sb) }),
    fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
    fc.constant({ kind: 'wrap' as const }),
    fc.constant({ kind: 'bom' as const }),
    fc.record({ kind: fc.constant('bytes' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 64 }) }),
  );

/** `text` (one JSON event) with `damage` done to it; the result is raw bytes for stdin. */
function damaged(text: string, damage: Damage): Buffer {
  const event = JSON.parse(text) as Record<string, unknown>;
  const keys = Object.keys(event);
  switch (damage.kind) {
    case 'drop':
      delete event[keys[damage.key % keys.length]!];
      return Buffer.from(JSON.stringify(event));
    case 'replace':
      event[keys[damage.key % keys.length]!] = damage.value;
      return Buffer.from(JSON.stringify(event));
    case 'replace-input': {
      const input = event.tool_input;
      if (input && typeof input === 'object' && !Array.isArray(input)) {
        const ik = Object.keys(input);
        if (ik.length) (input as Record<string, unknown>)[ik[damage.key % ik.length]!] = damage.value;
      } else event.tool_input = damage.value;
      return Buffer.from(JSON.stringify(event));
    }
    case 'cut':
      return Buffer.from(text.slice(0, damage.at % Math.max(text.length, 1)));
    case 'wrap':
      return Buffer.from(JSON.stringify([event]));
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    case 'bytes':
      return Buffer.concat([Buffer.from(text.slice(0, 40)), Buffer.from(damage.bytes), Buffer.from(text.slice(40))]);
  }
}

describe('hooks under malformed events (fuzz)', () => {
  it(`${EVENTS} damaged events of three agents: each exits 0 with nothing on stdout, the workspace untouched, the journal still records`, async () => {
    const sb = sandbox();
    sb.write('a.txt', 'alpha\n');
    sb.write('src/lib/keep.ts', 'export {};\n');
    const events = recorded(sb);
    const before = readTree(sb.ws);
    const samples = fc.sample(
      fc.record({ agent: fc.constantFrom(...AGENTS), pick: fc.nat(), damage: damageArb(sb) }),
      { numRuns: EVENTS, seed: SEED },
    );
    // Two at a time: hooks of one agent run in parallel too.
    for (let i = 0; i < samples.length; i += 2) {
      const pair = samples.slice(i, i + 2);
      const runs = await Promise.all(
        pair.map(async (s) => {
          const list = events[s.agent]!;
          const input = damaged(list[s.pick % list.length]!, s.damage);
          const r = await tbAsync(['hook', s.agent], { cwd: sb.ws, env: sb.env, input, timeout: 30_000 });
          return { s, input, r };
        }),
      );
      for (const { s, input, r } of runs) {
        const what = `${s.agent} ${JSON.stringify(s.damage).slice(0, 200)} <- ${input.toString('utf8', 0, 200)}`;
        expect(r.code, what).toBe(0);
        expect(r.stdout, what).toBe('');
      }
    }
    expect(treeDiff(readTree(sb.ws), before), 'a hook changed the workspace').toEqual([]);

    // The journal opens, and a valid file tool call is recorded as usual.
    const list = sb.tb(['list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const base = { session_id: 'fuzz-after', cwd: sb.ws, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_use_id: 'toolu_after_fuzz', tool_input: { file_path: `${sb.ws}/a.txt`, content: 'omega\n' } };
    expect(sb.hook({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'after the fuzz', prompt_id: 'p-after' }).code).toBe(0);
    expect(sb.hook(base).code).toBe(0);
    sb.write('a.txt', 'omega\n');
    expect(sb.hook({ ...base, hook_event_name: 'PostToolUse', tool_response: { type: 'update', filePath: `${sb.ws}/a.txt` } }).code).toBe(0);
    const sets = sb.json(['list', '--all']).sets as any[];
    const set = sets.find((s) => s.source.kind === 'tool' && s.source.toolCallId === 'toolu_after_fuzz');
    expect(set?.files.map((f: any) => f.path)).toEqual(['a.txt']);
    expect(sb.tb(['undo', set.id]).code).toBe(0);
    expect(sb.read('a.txt').toString()).toBe('alpha\n');
  }, 600_000);
});
