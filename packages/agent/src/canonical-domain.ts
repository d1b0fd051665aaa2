/**
 * The Core VRP v0.1 §5.1 host rule, shared by the booking-URL check and origin binding (Node Tool
 * Binding §6): a host is on a canonical domain when it equals it or is a subdomain of it at a
 * label boundary, after lowercase/IDNA normalisation.
 *
 * Like vrp-verify, this is the canonical host or its children only, never "the registrable
 * domain" (Core VRP v0.1 leaves the comparison open): deriving that needs the Public Suffix List, and approximating it
 * would fail open. A sibling subdomain of a canonical subdomain is therefore rejected.
 */

// A bare host name: no scheme, userinfo, port, path, query, fragment, backslash or whitespace.
const BARE_HOST = /^[^/@:?#\\\s[\]%]+$/;

/** Hosts already normalised (see `normalizeHost`), bounded: past the limit the memory starts over. */
const normalizedHosts = new Map<string, string | null>();
const REMEMBERED_HOSTS_LIMIT = 1024;
const MAX_REMEMBERED_HOST_LENGTH = 253;

/**
 * Lowercase/IDNA (punycode) form of a bare host name through the WHATWG URL parser, or null
 * when the input is not a bare host (so `evil.net@example.com` or `example.com:8443` never
 * normalise to something else) or has an empty label.
 */
export function normalizeHost(host: unknown): string | null {
  if (typeof host !== 'string') return null;
  // One verification asks about the same few names several times (discovery, the signed
  // canonical_domain, the booking URL's host), each a WHATWG URL parse: remember the answers for
  // names no longer than a DNS name (RFC 1035 §2.3.4), a bounded number of them.
  if (host.length > MAX_REMEMBERED_HOST_LENGTH) return normalizeHostOnce(host);
  let normalized = normalizedHosts.get(host);
  if (normalized === undefined) {
    normalized = normalizeHostOnce(host);
    if (normalizedHosts.size >= REMEMBERED_HOSTS_LIMIT) normalizedHosts.clear();
    normalizedHosts.set(host, normalized);
  }
  return normalized;
}

function normalizeHostOnce(host: string): string | null {
  if (!BARE_HOST.test(host)) return null;
  let hostname: string;
  try {
    hostname = new URL(`https://${host}`).hostname;
  } catch {
    return null;
  }
  if (hostname.length === 0 || hostname.split('.').some((label) => label.length === 0)) return null;
  return hostname;
}

/**
 * True when `host` (a URL `hostname`, no port) is `canonicalDomain` or a subdomain of it at a
 * label boundary: `book.example.com` is on `example.com`; `example.com.evil.net` and
 * `evil-example.com` are not. Anything that does not normalise is false (fail closed).
 */
export function isOnCanonicalDomain(host: unknown, canonicalDomain: unknown): boolean {
  const h = normalizeHost(host);
  const c = normalizeHost(canonicalDomain);
  if (!h || !c) return false;
  return h === c || h.endsWith(`.${c}`);
}
