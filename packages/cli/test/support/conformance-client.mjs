/**
 * Preloaded (`node --import`) into the official MCP conformance suite's process, so it reaches the
 * servers under test the way a configured client does (curl `--resolve` + `--cacert`, plus the
 * bearer token a user gives the client for `vrp gate proxy --listen`):
 * - VRPKIT_CONFORMANCE_RESOLVE: names (comma-separated) resolved to 127.0.0.1, a node's domain;
 * - VRPKIT_CONFORMANCE_CA: a PEM file of the CAs to trust (the dev CAs of the node and platform);
 * - VRPKIT_CONFORMANCE_BEARER: `ORIGIN TOKEN`, an Authorization header on every request to ORIGIN.
 * The suite's clients (the SDK's fetch and undici's `request`) both go through undici's global
 * dispatcher, so one dispatcher set here covers every request; nothing else in the suite changes.
 * Plain JavaScript: the suite runs under a Node (>= 22) without tsx.
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import { Agent, setGlobalDispatcher } from 'undici';

const names = new Set((process.env.VRPKIT_CONFORMANCE_RESOLVE ?? '').split(',').filter(Boolean));
const caFile = process.env.VRPKIT_CONFORMANCE_CA;
const [bearerOrigin, bearerToken] = (process.env.VRPKIT_CONFORMANCE_BEARER ?? '').split(' ');

const systemLookup = dns.lookup;

/** dns.lookup's shape: the listed names are 127.0.0.1, every other name is looked up as usual. */
function lookup(hostname, options, callback) {
  if (!names.has(hostname.toLowerCase())) return systemLookup(hostname, options, callback);
  const done = typeof options === 'function' ? options : callback;
  const all = typeof options === 'object' && options?.all;
  if (all) done(null, [{ address: '127.0.0.1', family: 4 }]);
  else done(null, '127.0.0.1', 4);
}

/** Adds the bearer token to a request for the proxy's origin, whatever shape undici got its headers in. */
function withBearer(dispatch) {
  return (opts, handler) => {
    if (!bearerToken || opts.origin?.toString().replace(/\/$/, '') !== bearerOrigin) return dispatch(opts, handler);
    const value = `Bearer ${bearerToken}`;
    const { headers } = opts;
    let next;
    if (Array.isArray(headers)) next = [...headers, 'authorization', value];
    else if (headers && typeof headers[Symbol.iterator] === 'function' && typeof headers !== 'string')
      next = [...[...headers].flat(), 'authorization', value];
    else next = { ...(headers ?? {}), authorization: value };
    return dispatch({ ...opts, headers: next }, handler);
  };
}

// The few probes that use node:http(s) directly resolve through dns.lookup (net reads it per connection).
dns.lookup = lookup;
const connect = { lookup, ...(caFile ? { ca: readFileSync(caFile, 'utf8') } : {}) };
setGlobalDispatcher(new Agent({ connect }).compose(withBearer));
