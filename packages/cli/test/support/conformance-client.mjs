/**
 * Preloaded (`node --import`) into the official MCP conformance suite's process, so it reaches the
 * servers under test the way a configured client does (curl `--resolve` + `--cacert`, plus the
 * bearer token a user gives the client for `vrp gate proxy --listen`):
 * - VRPKIT_CONFORMANCE_RESOLVE: names (comma-separated) resolved to 127.0.0.1, a node's domain;
 * - VRPKIT_CONFORMANCE_CA: a PEM file of the CAs to trust (the dev CAs of the node and platform);
 * - VRPKIT_CONFORMANCE_BEARER: `ORIGIN TOKEN`, an Authorization header on every request to ORIGIN.
 * The suite's clients (the SDK's fetch and undici's `request`) both go through undici's global
 * dispatcher, so one dispatcher set here covers them; its few node:http probes get the same name
 * resolution (dns.lookup) and token (http.request); nothing else in the suite changes.
 * Plain JavaScript: the suite runs under a Node (>= 22) without tsx.
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
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
/** The origin an `http.request(url | options, …)` call goes to. */
function originOf([first]) {
  if (typeof first === 'string' || first instanceof URL) return new URL(first).origin;
  const o = first ?? {};
  return `${o.protocol ?? 'http:'}//${o.hostname ?? o.host ?? 'localhost'}${o.port ? `:${o.port}` : ''}`;
}

/** The same `http.request` arguments for https: the scheme of a URL or an options object's `protocol`. */
function overTls(args) {
  return args.map((a, i) => {
    if (typeof a === 'string' || a instanceof URL) return a.toString().replace(/^http:/, 'https:');
    return i < 2 && a && typeof a === 'object' ? { ...a, protocol: 'https:' } : a;
  });
}

// The few raw probes (node:http, e.g. the header-validation scenarios) reach a node or tenant over
// TLS, as its https URL says (they serve nothing else), and carry the proxy's token: a request's
// headers go out at its first write, so one set here is sent with them.
const plainRequest = http.request;
http.request = function request(...args) {
  const toServerByName = names.has(new URL(originOf(args)).hostname.toLowerCase());
  const req = toServerByName ? https.request(...overTls(args)) : plainRequest.apply(this, args);
  if (bearerToken && originOf(args) === bearerOrigin) req.setHeader('authorization', `Bearer ${bearerToken}`);
  return req;
};

const connect = { lookup, ...(caFile ? { ca: readFileSync(caFile, 'utf8') } : {}) };
setGlobalDispatcher(new Agent({ connect }).compose(withBearer));
