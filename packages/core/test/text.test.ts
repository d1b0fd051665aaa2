/**
 * The character-class rule for text from outside (core/text.ts; issue 36 defects 4 and 11): one
 * class, refused where text must be clean (`isDisplaySafeText`) and shown as visible `\u{…}`
 * escapes where it is displayed (`visibleEscapes`).
 */
import { describe, expect, it } from 'vitest';
import { isDisplaySafeText, visibleEscapes } from '../src/index.js';

const UNSAFE: [string, string][] = [
  ['ESC', '\x1b'],
  ['DEL', '\x7f'],
  ['NEL (C1)', '\x85'],
  ['newline', '\n'],
  ['tab', '\t'],
  ['ALM', '\u061c'],
  ['LRM', '\u200e'],
  ['RLM', '\u200f'],
  ['LRE', '\u202a'],
  ['RLO', '\u202e'],
  ['LRI', '\u2066'],
  ['PDI', '\u2069'],
  ['line separator', '\u2028'],
  ['paragraph separator', '\u2029'],
  ['zero-width space', '\u200b'],
  ['word joiner', '\u2060'],
  ['soft hyphen', '\u00ad'],
  ['BOM / ZWNBSP', '\ufeff'],
  ['Hangul filler', '\u3164'],
  ['tag character', '\u{e0041}'],
];

describe('the character class for text from outside', () => {
  it.each(UNSAFE)('%s is refused and shown as a visible escape', (_name, c) => {
    expect(isDisplaySafeText(`a${c}b`)).toBe(false);
    const cp = c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    expect(visibleEscapes(`a${c}b`)).toBe(`a\\u{${cp}}b`);
  });

  it('leaves ordinary text of every script alone', () => {
    const text = 'Réservé — 東京 ✓ note_write Ünïcödé שלום مرحبا 😀 \u00a0';
    expect(isDisplaySafeText(text)).toBe(true);
    expect(visibleEscapes(text)).toBe(text);
  });

  it('keeps only the characters the context allows (a multi-line description keeps newline and tab)', () => {
    expect(isDisplaySafeText('line 1\n\tline 2', '\n\t')).toBe(true);
    expect(isDisplaySafeText('line 1\n\u202eline 2', '\n\t')).toBe(false);
    expect(visibleEscapes('a\nb\tc\u2028d', '\n')).toBe('a\nb\\u{0009}c\\u{2028}d');
  });
});
