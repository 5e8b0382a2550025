// server/wire.ts holds the engine's vocabulary and the wire's equal at compile time: here the
// TypeScript compiler is run on wire.ts with one word added to one side only (in memory; no file
// changes), and must report the drift in wire.ts. Unchanged, wire.ts has no error.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/lsp-client.js';

const WIRE = path.join(REPO_ROOT, 'server', 'wire.ts');

const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true, types: ['node'] };

/**
 * The parsed files no edit touches, by path, shared by every program of this file: they are the
 * same text under the same options each time (Node's types, TypeScript's libraries, the sources),
 * and a program only reads a source file, as a language service's programs share theirs.
 */
const unedited = new Map<string, ts.SourceFile>();

/** The errors tsc reports in wire.ts, with `edits` (file → [text, replacement]) applied in memory. */
function wireErrors(edits: Record<string, [string, string]>): string[] {
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => {
    const text = read(file);
    const edit = edits[path.relative(REPO_ROOT, file)];
    if (text === undefined || !edit) return text;
    expect(text, `${file} no longer contains ${edit[0]}`).toContain(edit[0]);
    return text.replace(edit[0], edit[1]);
  };
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, lang) => {
    const edited = edits[path.relative(REPO_ROOT, file)] !== undefined;
    const kept = edited ? undefined : unedited.get(file);
    if (kept) return kept;
    const text = host.readFile(file);
    const parsed = text === undefined ? getSourceFile(file, lang) : ts.createSourceFile(file, text, lang);
    if (!edited && parsed) unedited.set(file, parsed);
    return parsed;
  };
  const program = ts.createProgram([WIRE], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(WIRE)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the vocabulary checks in server/wire.ts', () => {
  it('compile as they are, and fail on a word added to the engine or the wire alone', () => {
    expect(fs.existsSync(WIRE)).toBe(true);
    expect(wireErrors({})).toEqual([]);
    const drifts: Record<string, [string, string]>[] = [
      { 'server/core/types.ts': ["export type SetState = 'applied'", "export type SetState = 'archived' | 'applied'"] },
      { 'protocol/src/types.ts': ["reason: 'changed-since' | 'interleaved'", "reason: 'renamed' | 'changed-since' | 'interleaved'"] },
      { 'server/core/capture/command.ts': ["status: 'ok' | 'baseline' | 'too-large';", "status: 'ok' | 'baseline' | 'too-large' | 'skipped';"] },
      // An optional field on one side only: assignable both ways, yet not the same type.
      { 'server/core/types.ts': ['  forced?: boolean;\n', '  forced?: boolean;\n  by?: string;\n'] },
    ];
    for (const d of drifts) expect(wireErrors(d).length, JSON.stringify(d)).toBeGreaterThan(0);
  }, 120_000);
});
