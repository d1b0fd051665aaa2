/** What every HTML page the node serves shares: escaping and the security headers. */

/**
 * The headers of every HTML page the node serves (the property page and `/book`): scripts only
 * from the node's own origin, no framing, no sniffing, no referrer leaking the stay's query to another site.
 */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // Not `no-referrer`: under it a browser posts a page's own form with `Origin: null`, which the
  // cross-site check (forms.ts) must refuse; `same-origin` still sends nothing to another site.
  'referrer-policy': 'same-origin',
};

/** `value` as HTML text: every character that could open markup or close an attribute is a character reference. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** JSON for a `<script type="application/json">` block: `<` can never start `</script>`. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}
