// A process whose file watcher's crawl fails at one folder (fail-crawl/fail-crawl.c, preloaded):
// the subscription @parcel/watcher makes lists the tree first, and a folder removed between its
// parent's listing and its own opening fails it. Forced here at the n-th folder opened.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { builtForFile } from './built-once.js';

/**
 * The preloaded library built once for the test file that calls this (in its own temporary
 * folder, removed after the file's tests): call at the top level; the getter gives its path once
 * the file's tests run.
 */
export function failCrawlLibrary(): () => string {
  return builtForFile('takeback-fail-crawl-', (dir) => {
    const so = path.join(dir, 'fail-crawl.so');
    execFileSync('cc', ['-shared', '-fPIC', '-O1', '-o', so, path.join(import.meta.dirname, 'fail-crawl', 'fail-crawl.c'), '-ldl']);
    return so;
  });
}

/**
 * The environment that fails, with ENOENT, the `nth` folder the watcher's crawls open in a
 * process (counted over all its crawls, 1 the first), and appends the process's pid to `mark` then.
 */
export function failCrawlEnv(so: string, nth: number, mark: string): NodeJS.ProcessEnv {
  return { LD_PRELOAD: so, TAKEBACK_TEST_FAIL_CRAWL_OPEN: String(nth), TAKEBACK_TEST_FAIL_CRAWL_MARK: mark };
}
