/**
 * The node checker against a real vrpkit node (every rule passes) and against broken nodes that
 * each violate one rule, each flagged with exactly that rule id. A broken node is a real https
 * server answering as the node's own domain (same name, the node's CA, another port): it relays
 * every read to the real node and breaks one thing on the way. Real https, official SDK clients.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch, type HardenedFetchOptions, type OfferArgs } from '@vrpkit/agent';
import {
  checkNode,
  comparableOffer,
  failedRules,
  type NodeConformanceReport,
  type NodeVector,
  type RuleId,
  recordNodeVector,
  replayNodeVector,
} from '@vrpkit/conformance';
import { BOUND_TOOL_NAME, type OfferEnvelope } from '@vrpkit/protocol';
import { hasChromium } from '@vrpkit/testkit/browser';
import { type Loose, mintEnvelope, TEST_JWKS } from '@vrpkit/testkit/minted';
import { day, mcpApp, serveSurface, startNode, type TestNode, type TestSurface, textResult, tool } from '@vrpkit/testkit/surfaces';
import { type Context, Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'conform.example';
const OTHER = 'other.example';
const ARGS: OfferArgs = { check_in: day(31), check_out: day(34), guests: 3 };
const BROWSER = hasChromium('conformance broken-nodes (the WebMCP surface of the conforming node)');

let dir: string;
let node: TestNode;
let other: TestNode;
let relay: HardenedFetch;
const served: TestSurface[] = [];

/** The real node's signed offer for `args` (or any other domain's). */
async function offerOf(args: Record<string, unknown> | OfferArgs, domain = DOMAIN): Promise<OfferEnvelope> {
  const a = args as Record<string, unknown>;
  const q = new URLSearchParams({ check_in: String(a.check_in), check_out: String(a.check_out), guests: String(a.guests) });
  return (await (await relay(`https://${domain}/api/verified-stay-offer?${q}`)).json()) as OfferEnvelope;
}

const HOP_BY_HOP = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive']);

/** Relay one request to the real node; `edit` may replace the answer. */
async function forward(c: Context, edit?: (path: string, res: Response) => Promise<Response | null>, pathname?: string): Promise<Response> {
  const u = new URL(c.req.url);
  if (pathname) u.pathname = pathname;
  const headers = new Headers();
  for (const [k, v] of c.req.raw.headers) if (!HOP_BY_HOP.has(k) && k !== 'host') headers.set(k, v);
  const method = c.req.method;
  const res = await relay(`https://${DOMAIN}${u.pathname}${u.search}`, {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: await c.req.arrayBuffer() }),
  });
  const edited = edit ? await edit(`${u.pathname}${u.search}`, res.clone()) : null;
  if (edited) return edited;
  const out = new Headers();
  for (const [k, v] of res.headers) if (!HOP_BY_HOP.has(k)) out.set(k, v);
  return new Response(await res.arrayBuffer(), { status: res.status, headers: out });
}

/** A broken node: `app` routes first, everything else is relayed (through `edit`). */
function brokenNode(app: Hono, edit?: (path: string, res: Response) => Promise<Response | null>): Hono {
  return app.all('*', (c) => forward(c, edit));
}

/** The same node answering with documents signed by another key (the test-vector key), published as its JWKS. */
function resigned(change: (offer: Loose) => void) {
  const mint = (e: OfferEnvelope) => {
    const offer = structuredClone(e.offer) as Loose;
    change(offer);
    return mintEnvelope(offer);
  };
  return brokenNode(
    mcpApp([tool(BOUND_TOOL_NAME)], async (_n, args) => textResult(mint(await offerOf(args)))).get('/.well-known/jwks.json', (c) => {
      c.header('cache-control', 'public, max-age=300');
      return c.json(TEST_JWKS);
    }),
    async (path, res) =>
      path.startsWith('/api/verified-stay-offer') && res.status === 200 ? Response.json(mint((await res.json()) as OfferEnvelope)) : null,
  );
}

interface BrokenCase {
  name: string;
  rule: RuleId;
  surfaces: ('mcp' | 'a2a')[];
  app: () => Hono;
}

const CASES: BrokenCase[] = [
  {
    name: 'wrong tool name on one surface (the A2A skill id is camelCase)',
    rule: 'ntb-3.name',
    surfaces: ['mcp', 'a2a'],
    app: () =>
      brokenNode(new Hono(), async (path, res) => {
        if (!path.startsWith('/.well-known/agent-card.json')) return null;
        const card = (await res.json()) as Loose;
        for (const s of card.skills) if (s.id === BOUND_TOOL_NAME) s.id = 'getVerifiedStayOffer';
        return Response.json(card);
      }),
  },
  {
    name: 'prefixed tool name',
    rule: 'ntb-3.no-prefix',
    surfaces: ['mcp'],
    app: () => brokenNode(mcpApp([tool(`acme_${BOUND_TOOL_NAME}`)], async (_n, a) => textResult(await offerOf(a)))),
  },
  {
    name: 'extra required argument',
    rule: 'ntb-4.arguments',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(
        mcpApp(
          [
            tool(BOUND_TOOL_NAME, {
              type: 'object',
              properties: { check_in: {}, check_out: {}, guests: { type: 'integer' }, unit: { type: 'string' } },
              required: ['check_in', 'check_out', 'guests', 'unit'],
            }),
          ],
          async (_n, a) => textResult(await offerOf(a)),
        ),
      ),
  },
  {
    name: 'envelope re-serialised (the JWS rebuilt around a re-encoded payload)',
    rule: 'ntb-5.envelope',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(
        mcpApp([tool(BOUND_TOOL_NAME)], async (_n, a) => {
          const e = await offerOf(a);
          const [h, , s] = e.signature.jws.split('.');
          const pretty = Buffer.from(JSON.stringify(e.offer, null, 2)).toString('base64url');
          return textResult({ ...e, signature: { ...e.signature, jws: `${h}.${pretty}.${s}` } });
        }),
      ),
  },
  {
    name: 'envelope edited (a lower total in the unsigned copy)',
    rule: 'ntb-5.envelope',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(
        mcpApp([tool(BOUND_TOOL_NAME)], async (_n, a) => {
          const e = await offerOf(a);
          e.offer.price.public_total = 1;
          return textResult(e);
        }),
      ),
  },
  {
    name: 'offer from another domain on the node’s MCP surface',
    rule: 'ntb-6.origin',
    surfaces: ['mcp'],
    app: () => brokenNode(mcpApp([tool(BOUND_TOOL_NAME)], async (_n, a) => textResult(await offerOf(a, OTHER)))),
  },
  {
    name: 'surface returns isError with an envelope',
    rule: 'ntb-5.error-result',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(
        mcpApp([tool(BOUND_TOOL_NAME)], async (_n, a) => ({
          isError: true,
          content: [{ type: 'text', text: JSON.stringify(await offerOf(a)) }],
        })),
      ),
  },
  {
    name: 'JWKS without a cache header',
    rule: 'core-3.1.jwks-cache',
    surfaces: ['mcp'],
    app: () => brokenNode(new Hono(), async (path, res) => (path === '/.well-known/jwks.json' ? Response.json(await res.json()) : null)),
  },
  {
    name: 'JWKS with the signing kid missing',
    rule: 'core-3.kid-published',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(new Hono(), async (path, res) => {
        if (path !== '/.well-known/jwks.json') return null;
        const jwks = (await res.json()) as Loose;
        for (const k of jwks.keys) k.kid = `${k.kid}-renamed`;
        return Response.json(jwks, { headers: { 'cache-control': 'public, max-age=300' } });
      }),
  },
  {
    name: 'discovery jwks_url on another host',
    rule: 'core-2.jwks-url',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(new Hono(), async (path, res) => {
        if (path !== '/.well-known/vacation-rental.json') return null;
        const doc = (await res.json()) as Loose;
        doc.jwks_url = `https://keys.${OTHER}/.well-known/jwks.json`;
        return Response.json(doc);
      }),
  },
  {
    name: 'booking URL on another host (signed)',
    rule: 'core-5.1.booking-url',
    surfaces: ['mcp'],
    app: () =>
      resigned((offer) => {
        const url = new URL(offer.booking.direct_booking_url);
        url.hostname = 'book.ota.example';
        offer.booking.direct_booking_url = url.href;
      }),
  },
  {
    name: 'unsigned negative',
    rule: 'core-7.signed-negative',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(new Hono(), async (path, res) => {
        if (!path.startsWith('/api/verified-stay-offer') || !/guests=1000\b/.test(path)) return null;
        const e = (await res.json()) as Loose;
        return Response.json({ ...e, signature: null });
      }),
  },
  {
    name: '500 on bad input',
    rule: 'core-4.bad-input',
    surfaces: ['mcp'],
    app: () =>
      brokenNode(new Hono(), async (path, res) =>
        path.startsWith('/api/verified-stay-offer') && res.status === 400 ? Response.json({ error: 'internal' }, { status: 500 }) : null,
      ),
  },
];

let brokenFor: Map<string, TestSurface>;

function network(target: TestSurface | TestNode): HardenedFetchOptions {
  return { connectTo: [target.connectTo, other.connectTo], ca: [node.ca.certPem, other.ca.certPem] };
}

function statuses(r: NodeConformanceReport): Record<string, string> {
  return Object.fromEntries(r.results.map((x) => [`${x.rule}${x.surface ? `@${x.surface}` : ''}`, x.status]));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-broken-nodes-'));
  [node, other] = await Promise.all([startNode(DOMAIN, dir), startNode(OTHER, dir)]);
  relay = createHardenedFetch({ connectTo: [node.connectTo, other.connectTo], ca: [node.ca.certPem, other.ca.certPem] });
  brokenFor = new Map();
  for (const c of CASES) {
    const s = await serveSurface(DOMAIN, node.ca, c.app());
    served.push(s);
    brokenFor.set(c.name, s);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(served.map((s) => s.close()));
  await relay?.close();
  await Promise.all([node?.node.close(), other?.node.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('checkNode on a conforming node', () => {
  it('a vrpkit node passes every rule on every surface it exposes, with evidence', async () => {
    const report = await checkNode(DOMAIN, { network: network(node), args: ARGS, ...(BROWSER ? {} : { surfaces: ['mcp', 'a2a'] }) });
    expect(failedRules(report)).toEqual([]);
    expect(report.results.filter((r) => r.status !== 'pass')).toEqual([]);
    expect(report.conforms).toBe(true);
    expect(report.surfaces.map((s) => [s.surface, s.exposed])).toEqual(
      BROWSER
        ? [
            ['mcp', true],
            ['a2a', true],
            ['webmcp', true],
          ]
        : [
            ['mcp', true],
            ['a2a', true],
          ],
    );
    const rules = new Set(report.results.map((r) => r.rule));
    for (const r of [
      'core-2.discovery',
      'core-3.1.jwks-cache',
      'core-5.1.booking-url',
      'core-7.signed-negative',
      'core-4.bad-input',
      'ntb-10.same-offer',
    ])
      expect(rules).toContain(r);
    const jwks = report.results.find((r) => r.rule === 'core-3.jwks');
    expect(jwks?.evidence[0]).toMatchObject({
      url: `https://${DOMAIN}/.well-known/jwks.json`,
      status: 200,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(report)).not.toContain('"jws"'); // verdicts and digests, not the documents
  }, 120_000);

  it('auto: a surface the node does not expose is not judged; a surface named explicitly must be there', async () => {
    const mcpOnly = await serveSurface(DOMAIN, node.ca, brokenNode(new Hono().get('/.well-known/agent-card.json', (c) => c.notFound())));
    served.push(mcpOnly);
    const auto = await checkNode(DOMAIN, {
      network: network(mcpOnly),
      args: ARGS,
      surfaces: 'auto',
      browser: { executablePath: '/nonexistent/chromium' },
    });
    expect(auto.surfaces.find((s) => s.surface === 'a2a')?.exposed).toBe(false);
    expect(auto.results.some((r) => r.surface === 'a2a')).toBe(false);
    expect(statuses(auto)['ntb-3.name@webmcp']).toBe('unknown'); // no browser: cannot tell, never a pass
    expect(failedRules(auto)).toEqual([]);

    const named = await checkNode(DOMAIN, { network: network(mcpOnly), args: ARGS, surfaces: ['mcp', 'a2a'] });
    expect(statuses(named)['ntb-3.name@a2a']).toBe('fail');
    expect(failedRules(named)).toEqual(['ntb-3.name']);
  }, 120_000);

  it('reads a surface at an explicit URL (an MCP endpoint at /api/mcp)', async () => {
    const elsewhere = await serveSurface(
      DOMAIN,
      node.ca,
      brokenNode(new Hono().post('/api/mcp', (c) => forward(c, undefined, '/mcp')).post('/mcp', (c) => c.notFound())),
    );
    served.push(elsewhere);
    const conventional = await checkNode(DOMAIN, { network: network(elsewhere), args: ARGS, surfaces: ['mcp'] });
    expect(conventional.surfaces[0]).toMatchObject({ url: `https://${DOMAIN}/mcp`, exposed: false });
    expect(failedRules(conventional)).toEqual(['ntb-3.name']);

    const explicit = await checkNode(DOMAIN, {
      network: network(elsewhere),
      args: ARGS,
      surfaces: ['mcp'],
      surfaceUrls: { mcp: `https://${DOMAIN}/api/mcp` },
    });
    expect(explicit.surfaces[0]).toMatchObject({ url: `https://${DOMAIN}/api/mcp`, exposed: true });
    expect(explicit.results.filter((r) => r.surface === 'mcp').map((r) => [r.rule, r.status])).toContainEqual([
      'ntb-10.same-offer',
      'pass',
    ]);
    expect(explicit.conforms).toBe(true);
  }, 60_000);
});

/**
 * Each run is also recorded as a node-surface vector and replayed offline at once: the replay must
 * give every rule the verdict the live run gave. With VRPKIT_WRITE_NODE_VECTORS=DIR the vectors
 * are written there (examples/conformance/node/ is made this way).
 */
const WRITE_TO = process.env.VRPKIT_WRITE_NODE_VECTORS;
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

async function recordAndReplay(
  file: string,
  name: string,
  description: string,
  target: TestSurface | TestNode,
  surfaces: ('mcp' | 'a2a')[],
) {
  const fetch = createHardenedFetch(network(target));
  try {
    const { vector, report } = await recordNodeVector(DOMAIN, { name, description }, { fetch, args: ARGS, surfaces });
    const replayed = await replayNodeVector(JSON.parse(JSON.stringify(vector)) as NodeVector);
    expect(replayed.mismatches).toEqual([]);
    if (WRITE_TO) writeFileSync(join(WRITE_TO, `${file}.json`), `${JSON.stringify(vector, null, 2)}\n`);
    return report;
  } finally {
    await fetch.close();
  }
}

describe('checkNode on broken nodes: each is flagged with exactly the rule it breaks', () => {
  it('the conforming node, recorded over MCP and A2A, replays as conforming', async () => {
    const report = await recordAndReplay(
      '00-conforming-node',
      'conforming node',
      'A vrpkit node: every rule passes on MCP and A2A.',
      node,
      ['mcp', 'a2a'],
    );
    expect(report.conforms).toBe(true);
  }, 60_000);

  CASES.forEach((c, i) => {
    it(`${c.name} → ${c.rule}`, async () => {
      const broken = brokenFor.get(c.name) as TestSurface;
      const file = `${String(i + 1).padStart(2, '0')}-${slug(c.rule)}-${slug(c.name).slice(0, 40).replace(/-$/, '')}`;
      const report = await recordAndReplay(file, c.name, `A node that breaks one rule (${c.rule}): ${c.name}.`, broken, c.surfaces);
      expect(failedRules(report)).toEqual([c.rule]);
      expect(report.conforms).toBe(false);
    }, 60_000);
  });
});

describe('comparableOffer', () => {
  it('ignores issuance time stamps and the offer id, nothing else', async () => {
    const a = (await offerOf(ARGS)).offer;
    const b = JSON.parse(JSON.stringify(a).split(String(a.booking.offer_id)).join('a-later-offer-id')) as typeof a;
    b.generated_at = '2030-01-01T00:00:00Z';
    b.valid_until = '2030-01-01T00:15:00Z';
    expect(comparableOffer(a)).toBe(comparableOffer(b));
    expect(comparableOffer({ ...a, price: { ...a.price, agent_total: (a.price.agent_total ?? 0) + 1 } })).not.toBe(comparableOffer(b));
    expect(comparableOffer({ ...a, request: { ...a.request, guests: 4 } })).not.toBe(comparableOffer(b));
  });
});
