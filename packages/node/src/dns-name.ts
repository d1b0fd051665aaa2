/**
 * The one DNS label rule the node and the platform check names against (RFC 1123 §2.1): 1–63
 * letters, digits and inner hyphens. Lowercase; a pattern that takes any case adds the `i` flag.
 */
export const DNS_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';

/** A whole DNS name of at least two labels, its total length bounded by the lookahead `lengths` (e.g. `{4,253}`). */
export function dnsNamePattern(lengths: string): RegExp {
  return new RegExp(`^(?=.${lengths}$)${DNS_LABEL}(?:\\.${DNS_LABEL})+$`);
}
