/**
 * The character-class rule for text from outside (issue 36, defects 4 and 11): one class of
 * characters that never reach a person raw — not a guest's name in a terminal, not a tool's
 * arguments or definition on the approvals page, not a server's error message.
 *
 * - C0 and C1 controls and DEL (`\p{Cc}`): they move the cursor, clear the screen, retitle the
 *   window. Where the context allows it, the caller keeps newline or tab (`keep`).
 * - Bidi controls: ALM U+061C, LRM/RLM U+200E/U+200F, the embeddings and overrides
 *   U+202A–U+202E and the isolates U+2066–U+2069 (Unicode UAX #9): they reorder what is shown,
 *   so what a person reads differs from what runs.
 * - The line and paragraph separators U+2028/U+2029: a new line where none is expected.
 * - Default-ignorable code points (`\p{Default_Ignorable_Code_Point}`, Unicode UAX #44 §5.3:
 *   zero-width spaces and joiners, the soft hyphen, variation selectors, tag characters, Hangul
 *   fillers): they render as nothing, so two texts that look the same are different. The joiners
 *   and variation selectors inside emoji or Persian and Indic words are caught too: one rule is
 *   worth more than a prettier emoji, and such text still shows (escaped), never silently.
 *
 * Global: `replace` with it reaches every one; `isDisplaySafeText` and `visibleEscapes` use it.
 */
export const UNSAFE_TEXT_CHARACTERS = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Default_Ignorable_Code_Point}]/gu;

/**
 * True when `text` holds none of `UNSAFE_TEXT_CHARACTERS` other than those in `keep` (e.g.
 * `'\n\t'` for a multi-line description). Text from outside that must be refused, not shown
 * escaped (a guest's name), is checked with this.
 */
export function isDisplaySafeText(text: string, keep = ''): boolean {
  for (const m of text.matchAll(UNSAFE_TEXT_CHARACTERS)) if (!keep.includes(m[0])) return false;
  return true;
}

/**
 * `text` with every character of `UNSAFE_TEXT_CHARACTERS` (but those in `keep`) shown as a
 * visible `\u{XXXX}` escape (hex, upper case, at least four digits): how the CLI prints text
 * from outside, and how the approvals page shows it. JSON output needs none of this.
 */
export function visibleEscapes(text: string, keep = ''): string {
  return text.replace(UNSAFE_TEXT_CHARACTERS, (c) =>
    keep.includes(c) ? c : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`,
  );
}
