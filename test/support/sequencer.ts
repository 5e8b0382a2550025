// The order vitest starts the test files in (vitest.config.ts: sequence.sequencer). With several
// workers the suite lasts as long as its busiest worker: a long file started last keeps one
// worker busy while the others have nothing left to take. So the files known to be long start
// first, and the short ones fill in behind them.
//
// The order changes only when a file starts, never what it tests or whether it passes: a file
// missing from LONG_FILES (a new one, a renamed one) still runs, only later than it could.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest test files, longest first: the longer of two whole runs, each file's end time less
 * its start time (`npx vitest run --reporter=json` on a loaded 2-core machine). Files under half a
 * minute there are left to vitest's order. Paths are relative to the repository, with `/`.
 */
export const LONG_FILES: readonly string[] = [
  'test/opencode-e2e.test.ts',
  'test/nvim-e2e.test.ts',
  'test/vscode-e2e.test.ts',
  'test/property-1.test.ts',
  'test/property-2.test.ts',
  'test/property-3.test.ts',
  'test/gc-slices.test.ts',
  'test/power-cut.test.ts',
  'test/sidecar-stdio.test.ts',
  'test/cli.test.ts',
  'test/helix-init.test.ts',
  'test/qwen-e2e.test.ts',
  'test/gemini-e2e.test.ts',
  'test/fuzz-hooks.test.ts',
  'test/property-merge-cli.test.ts',
  'test/property-merge.test.ts',
  'test/fuzz-hunks.test.ts',
  'test/opencode-plugin.test.ts',
  'test/http-hooks.test.ts',
  'test/cline-e2e.test.ts',
  'test/watcher.test.ts',
  'test/helix-e2e.test.ts',
  'test/codex-e2e.test.ts',
  'test/hook-daemon.test.ts',
  'test/merge.test.ts',
  'test/redo-last.test.ts',
  'test/baseline-attack.test.ts',
  'test/merge-crash.test.ts',
  'test/watchman.test.ts',
];

/**
 * Where a file stands among the long ones: its index in LONG_FILES; after those, a file that
 * drives a real agent or editor (`*-e2e`, `*-harness`), which takes seconds to start; then the rest.
 */
export function longRank(relPath: string): number {
  const i = LONG_FILES.indexOf(relPath);
  if (i >= 0) return i;
  return /-(e2e|harness)\.test\.ts$/.test(relPath) ? LONG_FILES.length : LONG_FILES.length + 1;
}

/**
 * Vitest's own order (its cached durations of earlier runs, else the larger files first), with
 * the long files moved ahead in {@link longRank}'s order. The sort is stable, so files of one
 * rank keep vitest's order among themselves.
 */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rel = (f: TestSpecification) => path.relative(root, f.moduleId).split(path.sep).join('/');
    const sorted = await super.sort(files);
    return sorted
      .map((f, at) => ({ f, at, rank: longRank(rel(f)) }))
      .sort((a, b) => a.rank - b.rank || a.at - b.at)
      .map((x) => x.f);
  }
}
