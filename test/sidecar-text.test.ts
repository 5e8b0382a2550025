// The sidecar's text helpers: line edits that turn one text into another, and the profiles that
// say how an editor's text stands for a file's bytes.
import { describe, expect, it } from 'vitest';
import { applyEdits, editableText, eolOf, fromClientText, learnProfile, lineEdits, toClientText } from '../server/sidecar/text.js';

const samples = [
  '',
  'a',
  'a\n',
  'a\nb\nc\n',
  'a\nb\nc',
  'one\ntwo\nthree\nfour\nfive\n',
  'x\r\ny\r\nz\r\n',
  'emoji 😀 line\nsecond ä ö\n',
  '\n\n\n',
  'no newline at all',
];

describe('lineEdits', () => {
  it('turns every sample into every other, with whole-line edits', () => {
    for (const from of samples) {
      for (const to of samples) {
        const edits = lineEdits(from, to);
        expect(applyEdits(from, edits), `${JSON.stringify(from)} → ${JSON.stringify(to)}`).toBe(to);
        if (from === to) expect(edits).toEqual([]);
      }
    }
  });

  it('is minimal: one changed line is one edit of that line', () => {
    const from = 'a\nb\nc\nd\ne\n';
    expect(lineEdits(from, 'a\nb\nC\nd\ne\n')).toEqual([{ range: { start: { line: 2, character: 0 }, end: { line: 3, character: 0 } }, newText: 'C\n' }]);
    expect(lineEdits(from, 'a\nc\nd\ne\nf\n')).toHaveLength(2);
  });

  it('counts positions in UTF-16 units, as LSP does', () => {
    const from = '😀x\nkeep\n';
    const to = '😀x\nkeep\nmore';
    const edits = lineEdits(from, to);
    expect(applyEdits(from, edits)).toBe(to);
    expect(lineEdits('😀', 'b')[0]!.range.end).toEqual({ line: 0, character: 2 });
  });
});

describe('profiles', () => {
  it('learns how an editor holds a file: mark and CRLF kept or dropped', () => {
    expect(learnProfile('a\n', 'a\n')).toEqual({ stripsBom: false, normalizesCrlf: false });
    expect(learnProfile('a\n', '\uFEFFa\n')).toEqual({ stripsBom: true, normalizesCrlf: false });
    expect(learnProfile('a\nb\n', 'a\r\nb\r\n')).toEqual({ stripsBom: false, normalizesCrlf: true });
    expect(learnProfile('a\nb\n', '\uFEFFa\r\nb\r\n')).toEqual({ stripsBom: true, normalizesCrlf: true });
    expect(learnProfile('other', 'a\n')).toBeNull();
  });

  it('round-trips a file through a profile', () => {
    const p = { stripsBom: true, normalizesCrlf: true };
    const file = '\uFEFFa\r\nb\r\n';
    expect(fromClientText(toClientText(file, p), p, true)).toBe(file);
  });

  it('lets through only text an editor can hold byte for byte', () => {
    expect(editableText(Buffer.from('plain\n'))).toBe('plain\n');
    expect(editableText(Buffer.from([0x61, 0x00, 0x62]))).toBeNull();
    expect(editableText(Buffer.from([0xff, 0xfe, 0x41]))).toBeNull();
    expect(editableText(Buffer.from('a\r\nb\n'))).toBeNull();
    expect(editableText(Buffer.from('a\rb'))).toBeNull();
    expect(eolOf('a\r\nb\r\n')).toBe('crlf');
  });
});
