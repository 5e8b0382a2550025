import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { LongFirstSequencer } from './test/support/sequencer.js';

// The tests start Node directly (`node bin/takeback.js`, editors' and agents' hooks, the sidecar),
// not through the `takeback` launcher, which starts Node with NODE_EXTRA_CA_CERTS emptied: where
// that variable is set, every one of those starts would build Node's whole CA store first (about
// 40 ms of CPU each; bin/takeback.js), which a person's takeback never does. No test makes a TLS
// connection; test/launcher.test.ts sets its own value to check the launcher.
delete process.env.NODE_EXTRA_CA_CERTS;

// One V8 code cache for every test's `takeback` (bin/takeback.js), as a person has one for all
// their workspaces: by default it lives in each TAKEBACK_HOME, and nearly every test makes a home
// of its own, so each command's first run in it would compile the bundle from source (about
// 22 ms of CPU, thousands of times in a run). Each cache file names the bundle and the Node it
// was made from, so worktrees and rebuilds never share one. A value already set (`0`) is kept.
process.env.TAKEBACK_CODE_CACHE ??= path.join(os.tmpdir(), `takeback-test-code-cache-${os.userInfo().uid}`);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once when it is missing or stale: the tests run the real bin/takeback.js.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One file more than there are cores (vitest's default leaves one core out: a single worker
    // on a 2-core machine). A test file spends much of its time waiting for the processes it
    // starts (takeback itself, real agents and editors) and for their timers: a whole run with
    // one file per core kept the two cores 77 % busy (1,884 s of CPU in 1,217 s), and a third
    // file took it to 1,112 s. The files are independent: each makes its own temporary folders,
    // homes and ports.
    maxWorkers: os.availableParallelism() + 1,
    // The long files start first, so that no worker is left with one at the end (see sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
  },
});
