// The shell tool calls the watcher tests run twice, walked and with a watcher's hints, and what
// they compare: the same files, the same calls, the Bash sets `list` shows.

import { filesOf, setsOf } from './takeback.js';
import type { Sandbox } from './takeback.js';

/** Writes the scenario's files into the sandbox's workspace, and commits them when `git`. */
export function seed(sb: Sandbox, git = true): void {
  sb.write('f.txt', 'a cat sat\n');
  sb.write('x', 'x\n');
  sb.write('gone.txt', 'gone\n');
  sb.write('dir/sub/deep.txt', 'deep\n');
  sb.write('dir/top.txt', 'top\n');
  sb.write('keep/k.txt', 'k\n');
  if (git) sb.sh('git add -A && git -c user.email=t@t -c user.name=t commit -qm seed');
}

/** The scenario's shell commands: folders moved in and out, files changed, made and removed. */
export const CALLS = [
  'mv dir moved',
  "sed -i 's/a/b/' f.txt && mv x y && rm gone.txt && echo more >> moved/sub/deep.txt && mkdir -p n/m && echo z > n/m/z",
  'echo again >> n/m/z && echo e >> moved/sub/deep.txt && mv keep moved/sub/keep',
  'echo k2 >> moved/sub/keep/k.txt && rm -r n',
];

/** The Bash sets `list` shows (command and files), oldest first, the no-op calls left out. */
export function commandSets(sb: Sandbox): [string, Record<string, string>][] {
  return setsOf(sb.json(['list']))
    .filter((s: any) => s.source.kind === 'command')
    .map((s: any) => [s.source.command, filesOf(s)]);
}
