/**
 * bench/verify — offer verification throughput.
 *
 * Offline: over a pool of distinct signed offers (no two checks of the same bytes in a slice), `verifyOffer` (vrpkit) vs the reference verifier `@vacationrentalprotocol/vrp-verify`
 * vs raw `crypto.verify` of the same signing-input bytes with a ready KeyObject (the floor: no
 * parsing, no key lookup, no freshness, no payload comparison). Contenders run in short
 * interleaved slices; ratios are taken within each round and the median is reported, so load
 * drift on a shared machine hits all of them alike.
 * Targets: ≥ 1.0× the reference verifier (@vacationrentalprotocol/vrp-verify 0.1.1) and ≥ 0.95× raw crypto.verify;
 * each contender's CPU µs per verification is reported beside its rate.
 *
 * Online: `fetchVerifiedStayOffer` against a local node over https (dev CA) with warm JWKS and
 * discovery caches — one offer GET, verification, safe-to-quote check — with and without the JWKS
 * cache's signature memo (the node serves the same offer bytes while its offer cache holds them) — vs the bare offer GET
 * through the same hardened fetch (same undici Agent, same pooled connections: the HTTP floor).
 * The node runs in a child process (this file with `--serve`), so the client's work and the
 * node's never share an event loop; the contenders run in interleaved, rotated slices and the
 * median within-round ratio is reported, beside the client's CPU per request (process.cpuUsage)
 * and the node's (/proc), which follow the code rather than the neighbours' load.
 * Target: ≥ 0.85× the bare GET with warm caches.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/verify.ts [--rounds 6] [--seconds 2] [--only offline|online] [--breakdown]
 * (`--breakdown` adds offline rows that run verifyOffer's required steps cumulatively: parse +
 * verify, + payload JSON.parse, + payload = offer; and parse + verify with the payload = offer
 * proof by serialising the offer instead of parsing the payload.)
 * (≈ 60 s; writes bench/results/verify.json)
 */
import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyOffer as referenceVerifyOffer } from '@vacationrentalprotocol/vrp-verify';
import { createHardenedFetch, DiscoveryCache, fetchVerifiedStayOffer, JwksCache, jsonEqual, verifyOffer } from '@vrpkit/agent';
import {
  base64urlEncode,
  createJwsSigner,
  ed25519PrivateJwkFromSeed,
  parseCompactJws,
  publicJwkOf,
  sha256,
  systemClock,
  verifyEd25519Signature,
} from '@vrpkit/core';
import { initNode, serveNode } from '@vrpkit/node';
import { cpuSeconds, numberFlag, printTable, startChild } from './lib.js';

const DOMAIN = 'villa.example';

const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.floor(a.length / 2)] as number;
};

// ── offline ───────────────────────────────────────────────────────────────────────────────
/** Distinct offers in the offline pool: every contender cycles through them, so none verifies the same bytes twice in a slice. */
const OFFLINE_POOL = 4096;

/**
 * Vector 01's offer re-signed `OFFLINE_POOL` times under a bench key, each with its own offer id
 * (distinct signing inputs): the offline rows measure real signature checks, never a remembered one.
 */
function offlinePool() {
  const vector = JSON.parse(readFileSync(new URL('../packages/agent/fixtures/offer/01-valid-fresh.json', import.meta.url), 'utf8'));
  const kid = 'bench-offline-key';
  const priv = ed25519PrivateJwkFromSeed(sha256('bench/verify offline key'));
  const signer = createJwsSigner(priv, kid);
  const jwks = { keys: [publicJwkOf(priv, kid)] };
  const offers = Array.from({ length: OFFLINE_POOL }, (_, i) => {
    const offer = structuredClone(vector.input.offer);
    offer.booking.direct_booking_url = `https://example-host.invalid/book?offer_id=bench-${i}`;
    const jws = signer.sign(JSON.stringify(offer), { typ: 'JWT' });
    const envelope = { ...vector.input, offer, signature: { ...vector.input.signature, kid, jws } };
    const [h, p, s] = jws.split('.');
    return { envelope, jws, signingInput: Buffer.from(`${h}.${p}`, 'ascii'), signature: Buffer.from(s as string, 'base64url') };
  });
  return { offers, jwks, clock: vector.clock as string };
}

function offlineBench() {
  const { offers, jwks, clock } = offlinePool();
  const nowMs = Date.parse(clock);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwks.keys[0]?.x as string }, format: 'jwk' });

  // Sanity: every contender accepts every offer, so we time the success path of each.
  for (const o of offers) {
    if (verifyOffer({ envelope: o.envelope, jwks, now: nowMs }).status !== 'verified')
      throw new Error('vrpkit did not verify a pool offer');
    if (referenceVerifyOffer({ envelope: o.envelope, jwks, now: clock }).status !== 'verified')
      throw new Error('reference did not verify a pool offer');
    if (!cryptoVerify(null, o.signingInput, key, o.signature)) throw new Error('crypto.verify rejected a pool offer');
  }

  // Each contender walks the pool with its own cursor.
  const cycling = (fn: (o: (typeof offers)[number]) => unknown) => {
    let i = 0;
    return () => fn(offers[i++ % OFFLINE_POOL] as (typeof offers)[number]);
  };
  const contenders: Record<string, () => unknown> = {
    'raw crypto.verify': cycling((o) => cryptoVerify(null, o.signingInput, key, o.signature)),
    // The least any verifier of *received* bytes does: split the compact string, take the signing
    // input's bytes and decode the signature (no strictness, no payload, no freshness).
    'crypto.verify from the compact JWS': cycling((o) => {
      const [a, b, c] = o.jws.split('.');
      return cryptoVerify(null, Buffer.from(`${a}.${b}`, 'ascii'), key, Buffer.from(c as string, 'base64url'));
    }),
    'vrp-verify (reference)': cycling((o) => referenceVerifyOffer({ envelope: o.envelope, jwks, now: clock })),
    'vrpkit verifyOffer': cycling((o) => verifyOffer({ envelope: o.envelope, jwks, now: nowMs })),
  };
  if (process.argv.includes('--breakdown')) {
    // verifyOffer's required steps one at a time, so each row minus the one before is what that
    // check costs: the strict JWS parse and the signing-input bytes (steps 1–2, 6), then the
    // signed payload's JSON.parse (step 7), then payload = offer (step 8, Core VRP v0.1 §7 condition 6).
    const parsed = (o: (typeof offers)[number]) => {
      const p = parseCompactJws(o.jws);
      if (!p.ok || !verifyEd25519Signature(p.jws.signingInput, p.jws.signature, key)) throw new Error('breakdown: not verified');
      return p.jws;
    };
    contenders['steps: parse + verify'] = cycling(parsed);
    contenders['steps: + payload JSON.parse'] = cycling((o) => JSON.parse(parsed(o).payload.toString('utf8')));
    contenders['steps: + payload = offer'] = cycling((o) => jsonEqual(o.envelope.offer, JSON.parse(parsed(o).payload.toString('utf8'))));
    // The same proof without parsing: the offer as JSON.stringify writes it, base64url-encoded, against the payload segment.
    // Unguarded (JSON.stringify drops or converts what jsonEqual would refuse, and no payload object results), so it is
    // what that shortcut would cost at least.
    contenders['steps: parse + verify + stringified offer = payload'] = cycling(
      (o) => base64urlEncode(JSON.stringify(o.envelope.offer)) === parsed(o).payloadSegment,
    );
  }

  /**
   * ops per CPU-second of `fn` over ~`ms` of CPU time. CPU time (process.cpuUsage), not wall time:
   * on a shared machine wall time also counts the moments this process was not scheduled at all.
   */
  function rate(fn: () => unknown, ms: number): number {
    let n = 0;
    const start = process.cpuUsage();
    let cpuMs = 0;
    while (cpuMs < ms) {
      for (let i = 0; i < 200; i++) fn();
      n += 200;
      const used = process.cpuUsage(start);
      cpuMs = (used.user + used.system) / 1000;
    }
    return (n * 1000) / cpuMs;
  }

  for (const fn of Object.values(contenders)) rate(fn, 300); // warm-up (JIT, KeyObject cache)
  // Many short interleaved slices, order rotated each round; ratios are taken within a round (the
  // contenders ran within half a second of each other) and the median round ratio is reported.
  const ROUNDS = 40;
  const SLICE_MS = 150;
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const ratioSamples = { vs_reference: [] as number[], vs_raw_crypto_verify: [] as number[], vs_compact_crypto_verify: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const round: Record<string, number> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length] as string;
      round[name] = rate(contenders[name] as () => unknown, SLICE_MS);
      samples[name]?.push(round[name]);
    }
    const ours = round['vrpkit verifyOffer'] as number;
    ratioSamples.vs_reference.push(ours / (round['vrp-verify (reference)'] as number));
    ratioSamples.vs_raw_crypto_verify.push(ours / (round['raw crypto.verify'] as number));
    ratioSamples.vs_compact_crypto_verify.push(ours / (round['crypto.verify from the compact JWS'] as number));
  }
  const opsPerCpuSecond = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const vsRaw = Object.fromEntries(
    names.map((k) => [k, median((samples[k] as number[]).map((x, i) => x / (samples['raw crypto.verify']?.[i] as number)))]),
  );
  return {
    rounds: ROUNDS,
    slice_ms: SLICE_MS,
    ops_per_cpu_s: opsPerCpuSecond,
    cpu_us_per_op: Object.fromEntries(Object.entries(opsPerCpuSecond).map(([k, v]) => [k, 1e6 / v])),
    median_round_ratio_vs_raw: vsRaw,
    targets: {
      vs_reference: median(ratioSamples.vs_reference),
      vs_raw_crypto_verify: median(ratioSamples.vs_raw_crypto_verify),
      vs_compact_crypto_verify: median(ratioSamples.vs_compact_crypto_verify),
    },
    ratio_samples: ratioSamples,
  };
}

// ── online ────────────────────────────────────────────────────────────────────────────────
interface Slice {
  requests: number;
  rps: number;
  client_cpu_us_per_request: number;
  node_cpu_us_per_request: number | null;
}

async function onlineBench(node: { port: number; caPem: string; pids: number[] }) {
  const rounds = numberFlag('rounds', 6);
  const sliceMs = numberFlag('seconds', 2) * 1000;
  const CONCURRENCY = 8;
  const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem });
  const day = (o: number) => new Date(Date.now() + o * 86_400_000).toISOString().slice(0, 10);
  const stay = { check_in: day(40), check_out: day(43), guests: 2 };
  const jwksCache = new JwksCache({ fetch });
  // The same, without the signature memo: every verification computes Ed25519.
  const jwksCacheNoMemo = new JwksCache({ fetch, signatureMemoEntries: 0 });
  const discoveryCache = new DiscoveryCache({ fetch });
  const offerUrl = `https://${DOMAIN}/api/verified-stay-offer?check_in=${stay.check_in}&check_out=${stay.check_out}&guests=2`;

  const contenders: Record<string, () => Promise<void>> = {
    // The HTTP floor: the same GET through the same hardened fetch (same Agent and pool), body read.
    'bare offer GET (https)': async () => {
      const res = await fetch(offerUrl);
      if (res.status !== 200) throw new Error(`bare offer GET answered ${res.status}`);
      await res.arrayBuffer();
    },
    'fetchVerifiedStayOffer (warm JWKS + discovery)': async () => {
      const r = await fetchVerifiedStayOffer(DOMAIN, stay, { fetch, clock: systemClock, jwksCache, discoveryCache });
      if (!r.safe_to_quote) throw new Error(`online verification failed: ${r.code}`);
    },
    'fetchVerifiedStayOffer (warm JWKS + discovery, signature memo off)': async () => {
      const r = await fetchVerifiedStayOffer(DOMAIN, stay, { fetch, clock: systemClock, jwksCache: jwksCacheNoMemo, discoveryCache });
      if (!r.safe_to_quote) throw new Error(`online verification failed: ${r.code}`);
    },
    // Without a discovery cache every verification reads discovery first: two requests each.
    'fetchVerifiedStayOffer (warm JWKS, no discovery cache)': async () => {
      const r = await fetchVerifiedStayOffer(DOMAIN, stay, { fetch, clock: systemClock, jwksCache });
      if (!r.safe_to_quote) throw new Error(`online verification failed: ${r.code}`);
    },
  };

  /** A closed loop of CONCURRENCY workers for `ms` of wall time; client and node CPU per request. */
  async function slice(fn: () => Promise<void>, ms: number): Promise<Slice> {
    let n = 0;
    const nodeCpu = cpuSeconds(node.pids);
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() - start < ms) {
          await fn();
          n++;
        }
      }),
    );
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const nodeCpuAfter = cpuSeconds(node.pids);
    return {
      requests: n,
      rps: (n * 1000) / elapsed,
      client_cpu_us_per_request: (used.user + used.system) / n,
      node_cpu_us_per_request: nodeCpu === null || nodeCpuAfter === null ? null : ((nodeCpuAfter - nodeCpu) * 1e6) / n,
    };
  }

  const names = Object.keys(contenders);
  try {
    for (const name of names) await slice(contenders[name] as () => Promise<void>, 500); // warm-up: TLS sessions, JIT, caches
    const slices: Record<string, Slice[]> = Object.fromEntries(names.map((k) => [k, []]));
    const ratios: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
    for (let r = 0; r < rounds; r++) {
      const round: Record<string, Slice> = {};
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + r) % names.length] as string;
        round[name] = await slice(contenders[name] as () => Promise<void>, sliceMs);
        slices[name]?.push(round[name]);
      }
      for (const name of names) ratios[name]?.push((round[name] as Slice).rps / (round['bare offer GET (https)'] as Slice).rps);
    }
    const med = (name: string, f: (s: Slice) => number | null) => {
      const xs = (slices[name] as Slice[]).map(f);
      return xs.includes(null) ? null : median(xs as number[]);
    };
    return {
      concurrency: CONCURRENCY,
      rounds,
      slice_ms: sliceMs,
      rows: Object.fromEntries(
        names.map((name) => [
          name,
          {
            rps: med(name, (s) => s.rps) as number,
            ratio_vs_bare: median(ratios[name] as number[]),
            client_cpu_us_per_request: med(name, (s) => s.client_cpu_us_per_request) as number,
            node_cpu_us_per_request: med(name, (s) => s.node_cpu_us_per_request),
          },
        ]),
      ),
      slices,
    };
  } finally {
    await fetch.close();
  }
}

// ── report ────────────────────────────────────────────────────────────────────────────────
function report(offline: ReturnType<typeof offlineBench> | null, online: Awaited<ReturnType<typeof onlineBench>> | null): void {
  const f = (v: number | null | undefined, d = 0) => (v === null || v === undefined ? 'n/a' : v.toFixed(d));
  if (offline) {
    const t = offline.targets;
    process.stdout.write('offline (one process, CPU time; ratio = median within-round rate ratio to raw crypto.verify)\n');
    printTable([
      ['contender', 'ops/CPU-s', 'CPU µs/op', '× raw'],
      ...Object.keys(offline.ops_per_cpu_s).map((k) => [
        k,
        f(offline.ops_per_cpu_s[k] as number),
        f(offline.cpu_us_per_op[k] as number, 1),
        f(offline.median_round_ratio_vs_raw[k] as number, 2),
      ]),
    ]);
    process.stdout.write(
      `\nvrpkit verifyOffer: ${t.vs_reference.toFixed(2)}× the reference (target ≥ 1.0), ${t.vs_raw_crypto_verify.toFixed(2)}× raw crypto.verify (target ≥ 0.95), ${t.vs_compact_crypto_verify.toFixed(2)}× crypto.verify from the compact JWS\n\n`,
    );
  }
  if (online) {
    process.stdout.write(
      `online (node in a child process; ${online.concurrency} concurrent, ${online.rounds} rounds × ${online.slice_ms / 1000} s, median round)\n`,
    );
    printTable([
      ['contender', 'req/s', '× bare', 'client CPU µs/req', 'node CPU µs/req'],
      ...Object.entries(online.rows).map(([k, r]) => [
        k,
        f(r.rps),
        f(r.ratio_vs_bare, 2),
        f(r.client_cpu_us_per_request),
        f(r.node_cpu_us_per_request),
      ]),
    ]);
    const warm = online.rows['fetchVerifiedStayOffer (warm JWKS + discovery)'];
    const bare = online.rows['bare offer GET (https)'];
    process.stdout.write(
      `\nonline, warm caches: ${f(warm?.ratio_vs_bare, 2)}× a bare offer GET over the same pooled connections (target ≥ 0.85); ` +
        `client CPU ${f(warm?.client_cpu_us_per_request)} µs vs ${f(bare?.client_cpu_us_per_request)} µs per request\n`,
    );
  }
  mkdirSync(new URL('results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('results/verify.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), offline, online }, null, 2)}\n`,
  );
}

// ── main ──────────────────────────────────────────────────────────────────────────────────
if (process.argv.includes('--serve')) {
  // The node under test, alone in this child process; the parent is the client.
  const root = mkdtempSync(join(tmpdir(), 'vrpkit-bench-verify-'));
  const dataDir = join(root, 'node');
  await initNode({ domain: DOMAIN, dataDir });
  const node = await serveNode({ dataDir, dev: true });
  process.stdout.write(`${JSON.stringify({ port: node.port, caPem: node.caPem, pids: [process.pid] })}\n`);
  const stop = async () => {
    await node.close();
    rmSync(root, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  // `--only offline` / `--only online` runs one half (for profiling one of them).
  const only = process.argv[process.argv.indexOf('--only') + 1];
  const offline = only === 'online' ? null : offlineBench();
  let online: Awaited<ReturnType<typeof onlineBench>> | null = null;
  if (only !== 'offline') {
    const child = await startChild(import.meta.url, ['--serve']);
    try {
      online = await onlineBench(child.hello as { port: number; caPem: string; pids: number[] });
    } finally {
      child.child.kill('SIGTERM');
    }
  }
  report(offline, online);
}
