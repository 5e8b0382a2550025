import { cpSync, existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EditorSpec } from './spec.js';

/**
 * The LSP4IJ user-defined language server template (see clients/jetbrains/README.md and LSP4IJ's
 * docs/UserDefinedLanguageServerTemplate.md): `id`, `name`, `programArgs` by OS, and
 * `fileTypeMappings` (`fileType.name` / `fileType.patterns`, `languageId`).
 */
export interface Lsp4ijTemplate {
  id: string;
  name: string;
  programArgs: { default: string; windows?: string; mac?: string; unix?: string };
  fileTypeMappings?: { fileType: { name?: string; patterns?: string[] }; languageId?: string }[];
  languageMappings?: { language: string; languageId?: string }[];
  env?: Record<string, string>;
}

/** Where `takeback init jetbrains` writes the template by default: `$XDG_CONFIG_HOME/takeback/jetbrains-template`. */
export function defaultTemplateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME ?? homedir(), '.config'), 'takeback', 'jetbrains-template');
}

/**
 * Writes the template folder (`template.json`, `README.md`) to `dir`, from `source` (the
 * package's clients/jetbrains/template), with the start command set to `serveCommand` (this
 * install's `takeback serve`). Writing it again gives the same bytes.
 */
export function writeJetbrainsTemplate(opts: { source: string; dir: string; serveCommand: string }): { dir: string; changed: boolean } {
  const template = JSON.parse(readFileSync(join(opts.source, 'template.json'), 'utf8')) as Lsp4ijTemplate;
  const quoted = opts.serveCommand.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  template.programArgs = { ...template.programArgs, default: `sh -c "${quoted}"` };
  const text = `${JSON.stringify(template, null, 2)}\n`;
  const file = join(opts.dir, 'template.json');
  const before = existsSync(file) ? readFileSync(file, 'utf8') : null;
  mkdirSync(opts.dir, { recursive: true });
  cpSync(join(opts.source, 'README.md'), join(opts.dir, 'README.md'));
  if (before !== text) writeFileSync(file, text);
  return { dir: opts.dir, changed: before !== text };
}

/**
 * Takes out a template folder that `writeJetbrainsTemplate` wrote (its template.json has id
 * `takeback`); anything else there is refused by leaving the folder in place. Returns whether
 * the folder was removed.
 */
export function removeJetbrainsTemplate(dir: string): { dir: string; changed: boolean } {
  const file = join(dir, 'template.json');
  if (!existsSync(file)) return { dir, changed: false };
  const t = JSON.parse(readFileSync(file, 'utf8')) as Partial<Lsp4ijTemplate>;
  if (t.id !== 'takeback') return { dir, changed: false };
  for (const f of ['template.json', 'README.md']) rmSync(join(dir, f), { force: true });
  try {
    rmdirSync(dir); // only if nothing else was put there
  } catch {
    // other files of the user's: leave the folder
  }
  return { dir, changed: true };
}

/** JetBrains IDEs (through LSP4IJ), for `takeback init jetbrains [--remove] [--dir DIR]`: does it and says what happened. */
export const jetbrains: EditorSpec = {
  name: 'jetbrains',
  async init(o, self) {
    if (o.remove) {
      const r = removeJetbrainsTemplate(o.dir ?? defaultTemplateDir());
      return `${r.changed ? 'removed the LSP4IJ template from' : 'no takeback template in'} ${r.dir}\n`;
    }
    const r = writeJetbrainsTemplate({ source: join(self.packageRoot, 'clients', 'jetbrains', 'template'), dir: o.dir ?? defaultTemplateDir(), serveCommand: self.serveCommand });
    return `${r.changed ? 'wrote the LSP4IJ template to' : 'nothing to change in'} ${r.dir}\nIn the IDE: LSP Consoles → + → Template → Import from custom template… → ${r.dir}\n`;
  },
};
