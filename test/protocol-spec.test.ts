// Keeps protocol/README.md in step with protocol/src: every method the code exports has a section
// that names it and each field of its params and result; every documented method, command and
// error code exists in the code (and the other way round); and the README records a hash of
// protocol/src/*.ts, so that any change to the protocol's source fails here until the document
// has been read again and its hash line updated.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { Commands } from '../protocol/src/commands.js';
import { ErrorCodes } from '../protocol/src/errors.js';
import { Methods } from '../protocol/src/methods.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'protocol', 'src');
const README = fs.readFileSync(path.join(ROOT, 'protocol', 'README.md'), 'utf8');

/** The hash the README must record: SHA-256 over each protocol/src/*.ts file's name and bytes, in name order. */
export function protocolHash(): string {
  const h = createHash('sha256');
  for (const name of fs.readdirSync(SRC).filter((n) => n.endsWith('.ts')).sort()) {
    h.update(`${name}\0`);
    h.update(fs.readFileSync(path.join(SRC, name)));
    h.update('\0');
  }
  return h.digest('hex');
}

/** README sections: `## ` headings with their text. */
function sections(): { title: string; text: string }[] {
  const parts = README.split(/^## /m).slice(1);
  return parts.map((p) => ({ title: p.slice(0, p.indexOf('\n')), text: p }));
}

function sectionOf(method: string): string | undefined {
  return sections().find((s) => s.text.includes(`**Method:** \`${method}\``))?.text;
}

/** For each method namespace in methods.ts: the top-level field names of its params and result, read by the TypeScript checker. */
function methodFields(): Map<string, { params: string[]; result: string[] }> {
  const file = path.join(SRC, 'methods.ts');
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(file)!;
  const out = new Map<string, { params: string[]; result: string[] }>();
  const fields = (t: ts.Type | undefined) => (t ? checker.getPropertiesOfType(t).map((p) => p.getName()) : []);
  for (const ns of checker.getExportsOfModule(checker.getSymbolAtLocation(sf)!)) {
    if (!(ns.flags & ts.SymbolFlags.Namespace)) continue;
    const members = checker.getExportsOfModule(ns);
    const method = members.find((m) => m.getName() === 'method');
    const type = members.find((m) => m.getName() === 'type');
    if (!method || !type) continue;
    const methodType = checker.getTypeOfSymbolAtLocation(method, sf);
    const name = methodType.isStringLiteral() ? methodType.value : '';
    const args = checker.getTypeArguments(checker.getTypeOfSymbolAtLocation(type, sf) as ts.TypeReference);
    out.set(name, { params: fields(args[0]), result: /Request$/.test(ns.getName()) ? fields(args[1]) : [] });
  }
  return out;
}

describe('protocol/README.md', () => {
  it('records the hash of protocol/src (update the document, then the hash line)', () => {
    const m = README.match(/<!-- protocol-src-sha256: ([0-9a-f]{64}) -->/);
    expect(m, 'README needs a line <!-- protocol-src-sha256: HEX -->').not.toBeNull();
    expect(m![1], `protocol/src changed: bring protocol/README.md up to date, then set its hash line to ${protocolHash()}`).toBe(protocolHash());
  });

  it('has a section for every method, naming each field of its params and result', () => {
    const all = methodFields();
    expect([...all.keys()].sort()).toEqual(Object.keys(Methods).sort());
    // The checker really reads the fields (a guard on this test itself).
    expect(all.get('undo/apply')!.params).toEqual(['selector', 'direction', 'force']);
    expect(all.get('undo/apply')!.result).toContain('pending');
    for (const [method, { params, result }] of all) {
      const text = sectionOf(method);
      expect(text, `no section with **Method:** \`${method}\``).toBeDefined();
      for (const f of [...params, ...result]) expect(text, `${method}: field ${f} is not documented in its section`).toMatch(new RegExp(`\\b${f}\\b`));
      for (const part of ['**Direction:**', '**Request:**', '**Response:**', '**Example:**', '**A client may ignore:**', '**Errors:**']) {
        if (part === '**Response:**' && method === 'changes/didChange') continue;
        expect(text, `${method}: no ${part}`).toContain(part);
      }
    }
  });

  it('gives every method the schema its params are checked with', () => {
    for (const [name, m] of Object.entries(Methods)) {
      expect((m as { params?: { kind?: string } }).params?.kind, `${name} has no params schema`).toBe('schema');
    }
  });

  it('documents only methods that exist', () => {
    const documented = [...README.matchAll(/\*\*Method:\*\* `([^`]+)`/g)].map((m) => m[1]!);
    for (const m of documented) expect(Object.keys(Methods), `documented method ${m} is not in protocol/src`).toContain(m);
  });

  it('documents every command and every error code, and no others', () => {
    for (const c of Object.values(Commands)) expect(README, `command ${c}`).toContain(`\`${c}\``);
    const documentedCommands = [...README.matchAll(/`(takeback\.[A-Za-z]+)`/g)].map((m) => m[1]!);
    for (const c of documentedCommands) expect(Object.values(Commands) as string[], `documented command ${c}`).toContain(c);
    for (const [name, code] of Object.entries(ErrorCodes)) expect(README, `error ${name} = ${code}`).toMatch(new RegExp(`\\| \`${name}\` \\| ${code} \\|`));
  });
});
