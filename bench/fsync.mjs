#!/usr/bin/env node
// What the durability syncs cost (core/durable.ts: a file tool's "before" copy and the commit that
// names it made durable before the hook answers; an undo's blobs and the folders it writes synced
// before the step that depends on them): a file tool's hook pair and a 10-file undo, each timed
// as it is and with the syncs skipped (TAKEBACK_BENCH_NO_SYNC=1, a switch for benchmarks only),
// interleaved, in the same run, on two copies of the same tree with a journal each.
//
//   node bench/fsync.mjs [--iterations=N]   # alone (needs dist/: npm run build)
//   node bench/run.mjs --only=fsync         # as a section of the benchmarks
//
// The tree is 200 files of about 4 KB in a folder of the bench cache, on the same filesystem as
// the journal (a tmpfs would make every sync free: the figure says which it is).
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, median, time } from './measure.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'takeback.js');

/** The filesystem type of `path` (`ext4`, `tmpfs`…), or `unknown`. */
function fsType(path) {
  try {
    return execFileSync('findmnt', ['-n', '-o', 'FSTYPE', '-T', path], { encoding: 'utf8' }).trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A workspace of 200 files of about 4 KB each, 20 to a folder, made fresh under `dir`. */
function makeTree(dir) {
  rmSync(dir, { recursive: true, force: true });
  for (let d = 0; d < 10; d++) {
    mkdirSync(join(dir, `d${d}`), { recursive: true });
    for (let f = 0; f < 20; f++) writeFileSync(join(dir, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`.repeat(300));
  }
}

/**
 * Times, `iterations` times and interleaved, with the syncs (`synced`) and without (`skipped`):
 * a Claude Code Write's PreToolUse and PostToolUse hooks around the write (`pair`), and
 * `takeback undo` of a command that rewrote 10 files (`undo`; a redo, untimed, puts them back).
 * Calls `record` with one row a measure, the synced median against the skipped one. Returns the
 * samples and medians (ms).
 */
export async function fsyncBench({ record, log = () => {}, scratch, iterations = 9 }) {
  const base = { ...process.env, TAKEBACK_LOG_LEVEL: '', TAKEBACK_HOOK_DAEMON: '0' };
  delete base.TAKEBACK_BENCH_NO_SYNC;
  const envs = {
    synced: { ...base, TAKEBACK_HOME: join(scratch, 'fsync-home-synced') },
    skipped: { ...base, TAKEBACK_HOME: join(scratch, 'fsync-home-skipped'), TAKEBACK_BENCH_NO_SYNC: '1' },
  };
  const wsOf = { synced: join(scratch, 'fsync-ws-synced'), skipped: join(scratch, 'fsync-ws-skipped') };
  for (const ws of Object.values(wsOf)) makeTree(ws);
  const tbIn = (name, args, opts = {}) => time(BIN, args, { cwd: wsOf[name], env: envs[name], ...opts });
  const ten = Array.from({ length: 10 }, (_, i) => join(`d${i}`, 'f0.txt'));
  const setOf = {};
  for (const name of Object.keys(envs)) {
    // The baseline scan, and the command whose 10 files each undo takes back.
    tbIn(name, ['run', '--', 'true']);
    tbIn(name, ['run', '--', 'sh', '-c', ten.map((p) => `printf 'rewritten\\n' >> ${p}`).join('; ')]);
    const cap = {};
    tbIn(name, ['list', '--json'], { capture: cap });
    setOf[name] = JSON.parse(cap.stdout).sets[0].id;
  }
  const fileOf = (name) => join(wsOf[name], 'd5', 'f7.txt');
  const ev = (name, hookName, id) =>
    JSON.stringify({
      session_id: 'bench-fsync',
      cwd: wsOf[name],
      hook_event_name: hookName,
      tool_name: 'Write',
      tool_input: { file_path: fileOf(name), content: 'x' },
      tool_use_id: id,
      ...(hookName === 'PostToolUse' ? { tool_response: { filePath: fileOf(name) } } : {}),
    });
  const s = { synced: { pair: [], undo: [] }, skipped: { pair: [], undo: [] } };
  for (let i = 0; i < iterations; i++) {
    for (const name of i % 2 ? ['skipped', 'synced'] : ['synced', 'skipped']) {
      const id = `toolu_fsync_${i}`;
      const pre = tbIn(name, ['hook', 'claude-code'], { input: ev(name, 'PreToolUse', id) });
      appendFileSync(fileOf(name), `written ${id}\n`);
      const post = tbIn(name, ['hook', 'claude-code'], { input: ev(name, 'PostToolUse', id) });
      s[name].pair.push(pre + post);
      s[name].undo.push(tbIn(name, ['undo', setOf[name]]));
      tbIn(name, ['redo', setOf[name]]);
    }
  }
  const m = {};
  for (const name of ['synced', 'skipped']) m[name] = { pair: median(s[name].pair), undo: median(s[name].undo) };
  const where = `${fsType(scratch)}, ${iterations} runs each, interleaved`;
  record({
    section: 9,
    measure: 'File tool hook pair (PreToolUse + PostToolUse of a Write), with the durability syncs, against them skipped',
    workspace: '200 files',
    value: fmt.ms(m.synced.pair),
    baseline: fmt.ms(m.skipped.pair),
    ratio: m.synced.pair / m.skipped.pair,
    target: '—',
    note: where,
  });
  record({
    section: 9,
    measure: 'Undo of a 10-file change, with the durability syncs, against them skipped',
    workspace: '200 files',
    value: fmt.ms(m.synced.undo),
    baseline: fmt.ms(m.skipped.undo),
    ratio: m.synced.undo / m.skipped.undo,
    target: '—',
    note: where,
  });
  log(`fsync: pair ${fmt.ms(m.synced.pair)} vs ${fmt.ms(m.skipped.pair)}, undo ${fmt.ms(m.synced.undo)} vs ${fmt.ms(m.skipped.undo)}`);
  return { samples: s, medians: m, filesystem: fsType(scratch) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const n = Number((process.argv.find((a) => a.startsWith('--iterations=')) ?? '=9').split('=')[1]);
  const parent = process.env.TAKEBACK_BENCH_CACHE || tmpdir();
  mkdirSync(parent, { recursive: true });
  const scratch = mkdtempSync(join(parent, 'takeback-fsync-'));
  try {
    await fsyncBench({
      record: (r) => process.stdout.write(`${r.measure}: ${r.value} vs ${r.baseline}, ratio ${fmt.ratio(r.ratio)} (${r.note})\n`),
      scratch,
      iterations: n,
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
