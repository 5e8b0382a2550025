// The person saves a file between a step's write of it and the step's failure: a real `takeback
// undo` is stopped (a preloaded library, pause/pause.c) right after it renamed its bytes into the
// first of two files; the person then saves that file, and also edits the second one so that its
// write stops ("changed meanwhile"). The failed step puts back what it wrote, but only where the
// path still holds it: the person's save of the first file is kept, and the step says so.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pauseEnv, pauseLibrary, stoppedRun, untilStopped } from './support/pause.js';
import { BIN, sandbox } from './support/takeback.js';

const pauseSo = pauseLibrary();

/** 300 KiB of `c`: over the in-place limit, so a step writes it by renaming a new file in. */
const big = (c: number) => Buffer.alloc(300 * 1024, c);

describe("a failed step puts back only what it wrote", () => {
  for (const how of ['in-place', 'rename'] as const) {
    it(`a save (${how}) of a file the step wrote, before the step failed on another, is kept and named`, async () => {
      const sb = sandbox();
      sb.write('a.bin', big(1));
      sb.write('b.txt', 'b before\n');
      expect(sb.tb(['run', '--', 'true']).code).toBe(0);
      expect(sb.tb(['run', '--', 'sh', '-c', "head -c 307200 /dev/zero | tr '\\0' '\\2' > a.bin && echo 'b by the agent' > b.txt"]).code).toBe(0);
      expect(sb.read('a.bin').equals(big(2))).toBe(true);
      const id = sb.json(['list']).sets.at(-1).id as string;

      const { child, out: printed, exited } = await stoppedRun(BIN, ['undo', id], sb.ws, { ...sb.env, ...pauseEnv(pauseSo(), '/a.bin') });
      // The step has just put a.bin back as it was before the agent; b.txt is still to come.
      expect(sb.read('a.bin').equals(big(1))).toBe(true);
      const saved = big(3);
      if (how === 'in-place') fs.writeFileSync(sb.abs('a.bin'), saved);
      else {
        fs.writeFileSync(sb.abs('.a.bin.swp'), saved);
        fs.renameSync(sb.abs('.a.bin.swp'), sb.abs('a.bin'));
      }
      fs.writeFileSync(sb.abs('b.txt'), 'b by the person\n');
      child.kill('SIGCONT');
      const code = await exited;
      const out = printed();

      expect(code, out).not.toBe(0);
      expect(sb.read('a.bin').equals(saved), `the person's save of a.bin was written over: ${out}`).toBe(true);
      expect(sb.read('b.txt').toString()).toBe('b by the person\n');
      expect(out).toMatch(/b\.txt changed meanwhile/);
      expect(out).toMatch(/a\.bin changed meanwhile, left as it is/);
      // No temporary file is left, and the journal still holds the change as applied.
      expect(fs.readdirSync(sb.ws).filter((n) => n.includes('.takeback-'))).toEqual([]);
      expect(sb.json(['list']).sets.at(-1).files.every((f: any) => !f.undone)).toBe(true);
    }, 120_000);
  }
});

describe('a step killed part-way, and the person saves before takeback next starts', () => {
  it("the next start's roll back keeps the save, puts back what the step wrote and a write in place it was cut short in", async () => {
    const sb = sandbox();
    sb.write('a.bin', big(1));
    sb.write('b.txt', 'b before\n');
    const cBefore = 'c before, line one\nc before, line two\n';
    sb.write('c.txt', cBefore);
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    const cAgent = 'C BY THE AGENT, LINE ONE\nC BY THE AGENT, LINE TWO\n';
    expect(sb.tb(['run', '--', 'sh', '-c', `head -c 307200 /dev/zero | tr '\\0' '\\2' > a.bin && echo 'b by the agent' > b.txt && printf '${cAgent.replace(/\n/g, '\\n')}' > c.txt`]).code).toBe(0);
    const id = sb.json(['list']).sets.at(-1).id as string;

    const child = spawn(process.execPath, [BIN, 'undo', id], { cwd: sb.ws, env: { ...sb.env, ...pauseEnv(pauseSo(), '/a.bin') }, stdio: 'ignore' });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    const exited = new Promise((r) => child.on('close', r));
    await untilStopped(child);
    child.kill('SIGKILL');
    await exited;
    // Killed right after it put a.bin back: the person then saves a.bin, and c.txt holds what a
    // write in place of it cut short after 10 bytes leaves (the step's first bytes, then the
    // agent's from there on: the undo writes the bytes from before over the agent's).
    expect(sb.read('a.bin').equals(big(1))).toBe(true);
    const saved = big(3);
    fs.writeFileSync(sb.abs('a.bin'), saved);
    fs.writeFileSync(sb.abs('c.txt'), cBefore.slice(0, 10) + cAgent.slice(10));

    // Any command starts the roll back.
    const list = sb.json(['list']);
    expect(sb.read('a.bin').equals(saved), "the person's save of a.bin was written over by the roll back").toBe(true);
    expect(sb.read('b.txt').toString()).toBe('b by the agent\n');
    expect(sb.read('c.txt').toString()).toBe(cAgent);
    expect(list.sets.find((s: any) => s.id === id).files.every((f: any) => !f.undone)).toBe(true);
    expect(fs.readdirSync(sb.ws).filter((n) => n.includes('.takeback-'))).toEqual([]);
  }, 120_000);
});
