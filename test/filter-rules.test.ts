import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ignore from 'ignore';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderRules, RULES_CACHE_BOUND, ScanFilter } from '../server/core/scan/filter.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('FolderRules', () => {
  it('answers as one long-lived ignore instance does past the bound at which it is made anew', () => {
    const root = '*.log\n!keep.log\nbuild/\n/scratch/\n';
    const exclude = 'secret-*\n!secret-ok\n';
    const texts = [root, exclude];
    const rules = new FolderRules(texts);
    const plain = ignore().add(root).add(exclude);
    const names = ['a.log', 'keep.log', 'build/', 'build/x.ts', 'scratch/', 'src/scratch/', 'secret-1', 'secret-ok', 'src/main.ts', 'deep/er/keep.log'];
    let ignored = 0;
    for (let i = 0; i < RULES_CACHE_BOUND * 3 + 7; i++) {
      const name = names[i % names.length] ?? '';
      // A new path each time (as a walk asks), in folders that repeat (as a walk's do).
      const p = name.endsWith('/') ? `d${i % 97}/${name.slice(0, -1)}${i}/` : `d${i % 97}/f${i}-${name}`;
      const want = plain.test(p);
      expect(rules.test(p)).toEqual(want);
      if (i > RULES_CACHE_BOUND * 2 && want.ignored) ignored++;
    }
    // Past the second renewal the rules still ignore (the texts carried over, not an empty instance).
    expect(ignored).toBeGreaterThan(RULES_CACHE_BOUND / 8);
  });
});

describe('ScanFilter over more paths than the rules cache holds', () => {
  it('skips what git ignores, a deeper negation taking back the root rule, to the last path asked', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-filter-rules-'));
    made.push(root);
    fs.writeFileSync(path.join(root, '.gitignore'), '*.log\n/out/\n');
    fs.mkdirSync(path.join(root, 'pkg', 'logs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'pkg', '.gitignore'), '!kept.log\n');
    fs.mkdirSync(path.join(root, 'out'));
    const filter = new ScanFilter(root, ['.git', 'node_modules']);
    const asked = RULES_CACHE_BOUND * 2 + 11;
    for (let i = 0; i < asked; i++) {
      const k = i % 4;
      const rel = k === 0 ? `pkg/logs/run${i}.log` : k === 1 ? `pkg/logs/kept.log` : k === 2 ? `src${i % 13}/f${i}.ts` : `out/f${i}.ts`;
      const want = k === 0 || k === 3;
      expect(filter.skips(rel, false), rel).toBe(want);
    }
    expect(filter.skips('pkg/kept.log', false)).toBe(false);
    expect(filter.skips('a.log', false)).toBe(true);
  });
});
