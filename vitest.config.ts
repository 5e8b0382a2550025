import os from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongFirstSequencer } from './test/support/sequencer.js';

// The tests start Node directly (`node bin/takeback.js`, editors' and agents' hooks, the sidecar),
// not through the `takeback` launcher, which starts Node with NODE_EXTRA_CA_CERTS emptied: where
// that variable is set, every one of those starts would build Node's whole CA store first (about
// 40 ms of CPU each; bin/takeback.js), which a person's takeback never does. No test makes a TLS
// connection; test/launcher.test.ts sets its own value to check the launcher.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once when it is missing or stale: the tests run the real bin/takeback.js.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One file per core at once (vitest's default leaves one core out: a single worker on a
    // 2-core machine). A test file spends most of its time waiting for the processes it starts
    // (takeback itself, real agents and editors), which do the work on the cores; with one worker
    // the second core mostly idles. The files are independent: each makes its own temporary
    // folders, homes and ports.
    maxWorkers: Math.max(2, os.availableParallelism()),
    // The long files start first, so that no worker is left with one at the end (see sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
  },
});
