import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// LSP4IJ's user-defined language server template (docs/UserDefinedLanguageServerTemplate.md and
// docs/UserDefinedLanguageServer.md): template.json is required; settings.json,
// initializationOptions.json, clientSettings.json, installer.json, settings.schema.json and
// README.md are optional. template.json holds `id`, `name`, `programArgs` (`default`, `windows`,
// `mac`, `unix`), `env`, `languageMappings`, `fileTypeMappings[{fileType: {name, patterns[]},
// languageId}]`.
const TEMPLATE_KEYS = new Set(['id', 'name', 'programArgs', 'env', 'languageMappings', 'fileTypeMappings']);
const OS_KEYS = new Set(['default', 'windows', 'mac', 'unix']);
const FILES = new Set(['template.json', 'settings.json', 'initializationOptions.json', 'clientSettings.json', 'installer.json', 'settings.schema.json', 'README.md']);

const repo = join(import.meta.dirname, '..');
const source = join(repo, 'clients', 'jetbrains', 'template');

function checkTemplate(dir: string): Record<string, unknown> {
  for (const f of readdirSync(dir)) expect(FILES.has(f), `${f} is not a file LSP4IJ reads from a template`).toBe(true);
  const t = JSON.parse(readFileSync(join(dir, 'template.json'), 'utf8')) as Record<string, unknown>;
  for (const k of Object.keys(t)) expect(TEMPLATE_KEYS.has(k), `unknown template.json field ${k}`).toBe(true);
  expect(t.id).toBe('takeback');
  expect(typeof t.name).toBe('string');
  const args = t.programArgs as Record<string, unknown>;
  expect(typeof args.default).toBe('string');
  for (const [k, v] of Object.entries(args)) {
    expect(OS_KEYS.has(k), `programArgs.${k}`).toBe(true);
    expect(typeof v).toBe('string');
    expect(v as string).toMatch(/serve/);
  }
  const maps = t.fileTypeMappings as { fileType: { name?: string; patterns?: string[] }; languageId?: string }[];
  expect(Array.isArray(maps) && maps.length > 0).toBe(true);
  for (const m of maps) {
    expect(Object.keys(m).every((k) => k === 'fileType' || k === 'languageId')).toBe(true);
    expect(Object.keys(m.fileType).every((k) => k === 'name' || k === 'patterns')).toBe(true);
    expect(m.fileType.patterns?.every((p) => typeof p === 'string')).toBe(true);
  }
  // Every file, whatever its name: the sidecar attaches to all of them.
  const patterns = maps.flatMap((m) => m.fileType.patterns ?? []);
  expect(patterns).toContain('*');
  expect(existsReadme(dir)).toBe(true);
  return t;
}

function existsReadme(dir: string): boolean {
  return readFileSync(join(dir, 'README.md'), 'utf8').includes('takeback');
}

describe('JetBrains (LSP4IJ) template', () => {
  it('the shipped template has only fields LSP4IJ documents', () => {
    checkTemplate(source);
  });

  it('takeback init jetbrains writes a template that starts this install, and is idempotent', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tb-jb-')), 'tpl');
    const run = () => execFileSync(process.execPath, [join(repo, 'bin', 'takeback.js'), 'init', 'jetbrains', '--dir', dir], { encoding: 'utf8' });
    const out = run();
    expect(out).toContain(dir);
    const t = checkTemplate(dir);
    const cmd = (t.programArgs as { default: string }).default;
    expect(cmd).toMatch(/^sh -c ".*serve"$/);
    // The command names this install: either `takeback` on PATH or this repo's bin by absolute path.
    expect(cmd.includes(join(repo, 'bin', 'takeback.js')) || cmd.includes('takeback serve')).toBe(true);
    const before = readFileSync(join(dir, 'template.json'), 'utf8');
    expect(run()).toMatch(/nothing to change|already/);
    expect(readFileSync(join(dir, 'template.json'), 'utf8')).toBe(before);
    // --remove takes out what init wrote, and only that.
    const removed = execFileSync(process.execPath, [join(repo, 'bin', 'takeback.js'), 'init', 'jetbrains', '--dir', dir, '--remove'], { encoding: 'utf8' });
    expect(removed).toContain('removed');
    expect(existsSync(dir)).toBe(false);
  });
});
