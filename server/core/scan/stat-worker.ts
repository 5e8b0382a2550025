// The scan's stat worker thread (StatWorker in stat-check.ts starts it by this module's path;
// scripts/bundle.mjs bundles it as its own file beside the command's bundles). For each request
// it takes rows of the index from the shared counter, as the thread that asked does, unless that
// thread took them all first (then it answers nothing, and nobody waits for it).
import fs from 'node:fs';
import { workerData, type MessagePort } from 'node:worker_threads';
import { statReader } from './lstat.js';
import { checkRows, type CheckInput, type CheckResult } from './stat-check.js';

const read = statReader(fs);
const port = (workerData as { port: MessagePort }).port;

// `state`: [0] 1 once this worker took the request, 2 once the asking thread withdrew it; [1] the
// next row; [2] 1 once this worker's answer is on the port.
port.on('message', (m: { state: SharedArrayBuffer; input: CheckInput }) => {
  const state = new Int32Array(m.state);
  if (Atomics.compareExchange(state, 0, 0, 1) !== 0) return;
  const out: CheckResult & { error?: string } = { dirty: [], suspects: [] };
  try {
    checkRows(read, m.input, state, out);
  } catch (e) {
    out.error = String((e as Error)?.stack ?? e);
  }
  port.postMessage(out);
  Atomics.store(state, 2, 1);
  Atomics.notify(state, 2);
});
