// `takeback init vscode`: installs the VS Code extension (clients/vscode, packaged by
// `npm run build:vscode` into clients/vscode/dist/takeback.vsix) with VS Code's own command line,
// `code --install-extension`, where `code` is on PATH; else prints that command.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TakebackError } from '../core/errors.js';
import { onPath, takebackOnPathIs } from '../path-lookup.js';
import type { EditorSpec, SelfInstall } from './spec.js';

/** The extension's id in VS Code (`publisher.name` of clients/vscode/package.json). */
export const VSCODE_EXTENSION_ID = 'takeback.takeback';

/** Where this install keeps the packaged extension: `<package>/clients/vscode/dist/takeback.vsix`. */
export function vsixPath(self: Pick<SelfInstall, 'packageRoot'>): string {
  return join(self.packageRoot, 'clients', 'vscode', 'dist', 'takeback.vsix');
}

/** Runs VS Code's command line `code` with `args`; its output, or a usage error saying what it printed. */
function runCode(code: string, args: string[]): string {
  try {
    return execFileSync(code, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message: string };
    throw new TakebackError('usage', `${code} ${args.join(' ')} failed: ${(err.stderr || err.stdout || err.message).trim()}`);
  }
}

/** VS Code, for `takeback init vscode [--remove]`: does it (with `code` on PATH) or says how, and what the extension needs. */
export const vscode: EditorSpec = {
  name: 'vscode',
  async init(o, self) {
    const code = onPath('code');
    if (o.remove) {
      if (!code) return `to take the extension out: code --uninstall-extension ${VSCODE_EXTENSION_ID}\n`;
      runCode(code, ['--uninstall-extension', VSCODE_EXTENSION_ID]);
      return `removed the VS Code extension ${VSCODE_EXTENSION_ID} with ${code}\n`;
    }
    const vsix = vsixPath(self);
    if (!existsSync(vsix)) {
      throw new TakebackError('usage', `no packaged VS Code extension at ${vsix}: build it with \`npm run build:vscode\` in ${self.packageRoot}`);
    }
    // The extension starts `takeback serve` by its setting takeback.command, `takeback` on PATH by default.
    const setting = takebackOnPathIs(self.bin)
      ? ''
      : `takeback is not on PATH: set "takeback.command" in VS Code's settings to ${JSON.stringify([process.execPath, self.bin, 'serve'])}\n`;
    if (!code) {
      return `to install the VS Code extension: code --install-extension ${vsix}\n(or in VS Code: Extensions → … → Install from VSIX… → ${vsix})\n${setting}`;
    }
    runCode(code, ['--install-extension', vsix, '--force']);
    return `installed the VS Code extension ${vsix} with ${code}\n${setting}`;
  },
};
