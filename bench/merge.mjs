#!/usr/bin/env node
// The three-way merge of undo (section 8 of bench/run.mjs; also runs alone, after `npm run build`:
// `node bench/merge.mjs` prints its figures):
//   - a 500-file turn where every file also has a later edit that does not overlap the agent's:
//     the merged undo against the plain undo of the same turn without later edits (≤ 1.5×);
//   - one 20,000-line file with one hunk of the agent and one later edit: the merge in process
//     (≤ 30 ms).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, median, time } from './measure.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'takeback.js');

/** 60 lines of source-like text for file `k`. */
function fileText(k) {
  let s = '';
  for (let i = 1; i <= 60; i++) s += `export const value_${k}_${i} = compute(${i}, "${'x'.repeat(i % 17)}");\n`;
  return s;
}

/** `text` with line `n` (1-based) replaced by `line`. */
function withLine(text, n, line) {
  const l = text.split('\n');
  l[n - 1] = line;
  return l.join('\n');
}

/**
 * Runs both measures and hands each row to `record` (bench/run.mjs's shape); `iterations` undo
 * and redo pairs of each kind.
 */
export async function mergeBench(record, iterations = 5, scratch = mkdtempSync(join(tmpdir(), 'takeback-bench-merge-'))) {
  const ws = join(scratch, 'ws-merge');
  const env = { ...process.env, TAKEBACK_HOME: join(scratch, 'home-merge'), TAKEBACK_LOG_LEVEL: '' };
  const paths = [];
  for (let k = 0; k < 500; k++) {
    const p = `src/m${k % 20}/f${k}.ts`;
    mkdirSync(dirname(join(ws, p)), { recursive: true });
    writeFileSync(join(ws, p), fileText(k));
    paths.push(p);
  }
  const tb = (args) => time(BIN, args, { cwd: ws, env });
  tb(['capture', 'begin', '--id', 'base']);
  tb(['capture', 'end', '--id', 'base']);
  tb(['turn', 'begin', '--id', 'merge500']);
  tb(['capture', 'begin', '--id', 'c500', '--tool', 'codemod', ...paths.map((p) => join(ws, p))]);
  paths.forEach((p, k) => writeFileSync(join(ws, p), withLine(fileText(k), 5, `export const value_${k}_5 = agent();`)));
  tb(['capture', 'end', '--id', 'c500']);
  tb(['turn', 'end', '--id', 'merge500']);

  const s = { plain: [], merged: [] };
  for (let i = 0; i < iterations; i++) {
    s.plain.push(tb(['undo', '--turn', 'merge500']));
    tb(['redo', '--turn', 'merge500']);
  }
  // The person's later edit of every file, on a line the agent did not touch.
  paths.forEach((p) => writeFileSync(join(ws, p), withLine(readFileSync(join(ws, p), 'utf8'), 40, '// a later edit')));
  for (let i = 0; i < iterations; i++) {
    s.merged.push(tb(['undo', '--turn', 'merge500']));
    tb(['redo', '--turn', 'merge500']);
  }
  tb(['undo', '--turn', 'merge500']);
  const kept = paths.every((p, k) => readFileSync(join(ws, p), 'utf8') === withLine(fileText(k), 40, '// a later edit'));
  const m = { plain: median(s.plain), merged: median(s.merged) };
  record({
    section: 8,
    measure: 'merged undo of a 500-file turn, every file edited since on another line',
    workspace: '500 files',
    value: fmt.ms(m.merged),
    baseline: `plain undo ${fmt.ms(m.plain)}`,
    ratio: m.merged / m.plain,
    target: '≤ 1.5',
    met: m.merged / m.plain <= 1.5,
    note: kept ? 'later edits kept, agent lines taken back' : 'FILES NOT AS EXPECTED',
  });

  const { mergeBytes } = await import('../dist/server/core/plan/merge.js');
  let text = '';
  for (let i = 1; i <= 20_000; i++) text += i % 10 === 0 ? '}\n' : `  line ${i}: call(${i % 97}, "${'y'.repeat(i % 13)}");\n`;
  const base = Buffer.from(text);
  const theirs = Buffer.from(withLine(text, 1200, '  the agent wrote this;'));
  const ours = Buffer.from(withLine(text, 15_000, '  a later edit;'));
  const t = [];
  const cpu = [];
  let ok = true;
  for (let i = 0; i < 11; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const r = mergeBytes(base, ours, theirs);
    const c = process.cpuUsage(c0);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpu.push((c.user + c.system) / 1000);
    ok &&= r.ok && r.bytes.includes('the agent wrote this') && r.bytes.includes('a later edit');
  }
  const ms = median(t);
  record({ section: 8, measure: 'merge of one 20,000-line file (one agent hunk, one later edit), in process', workspace: 'one file', value: fmt.ms(ms), baseline: 'target 30 ms', ratio: ms / 30, target: '≤ 1.0 (30 ms)', met: ms <= 30, note: `${ok ? 'merged' : 'MERGE NOT AS EXPECTED'}; CPU time ${fmt.ms(median(cpu))}` });
  return scratch;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const scratch = await mergeBench((r) => process.stdout.write(`${r.measure}: ${r.value} (${r.baseline}) ratio ${r.ratio.toFixed(2)} target ${r.target}${r.note ? ` — ${r.note}` : ''}\n`));
  rmSync(scratch, { recursive: true, force: true });
}
