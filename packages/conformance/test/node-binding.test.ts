/**
 * Node Tool Binding v0.1 §10 checker against a real vrpkit node (it must conform) and against the
 * same node with one surface swapped for a broken one (each must be caught, with the failing
 * sub-clause named). Real https, real SDK clients, real Chromium.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHardenedFetch, type HardenedFetch, type SurfaceClientOptions } from '@vrpkit/agent';
import { checkNodeToolBinding, comparableOffer } from '@vrpkit/conformance';
import { createDevCa } from '@vrpkit/node';
import { BOUND_TOOL_NAME, type OfferEnvelope } from '@vrpkit/protocol';
import { hasChromium } from '@vrpkit/testkit/browser';
import { day, mcpApp, serveSurface, startNode, type TestNode, type TestSurface, textResult, tool } from '@vrpkit/testkit/surfaces';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'conform.example';
const ARGS = { check_in: day(31), check_out: day(34), guests: 3 };
const BROWSER = hasChromium('conformance node-binding');

let dir: string;
let node: TestNode;
const fakes: TestSurface[] = [];
let relay: HardenedFetch;
let network: SurfaceClientOptions['network'];

async function offer(): Promise<OfferEnvelope> {
  const q = new URLSearchParams({ check_in: ARGS.check_in, check_out: ARGS.check_out, guests: String(ARGS.guests) });
  return (await (await relay(`https://${DOMAIN}/api/verified-stay-offer?${q}`)).json()) as OfferEnvelope;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-conformance-'));
  node = await startNode(DOMAIN, dir);
  relay = createHardenedFetch({ connectTo: [node.connectTo], ca: node.ca.certPem });
  const operatorCa = await createDevCa({ commonName: 'operator test CA' });
  fakes.push(
    // §4: requires a fourth argument.
    await serveSurface(
      `strict.${DOMAIN}`,
      node.ca,
      mcpApp(
        [
          tool(BOUND_TOOL_NAME, {
            type: 'object',
            properties: { check_in: {}, check_out: {}, guests: { type: 'integer' }, unit: {} },
            required: ['check_in', 'check_out', 'guests', 'unit'],
          }),
        ],
        async () => textResult(await offer()),
      ),
    ),
    // §3: prefixed name only.
    await serveSurface(
      `acme.${DOMAIN}`,
      node.ca,
      mcpApp([tool(`acme_${BOUND_TOOL_NAME}`)], async () => textResult(await offer())),
    ),
    // §5: edits the offer (on the node's own subdomain, so only the envelope check can catch it).
    await serveSurface(
      `edit.${DOMAIN}`,
      node.ca,
      mcpApp([tool(BOUND_TOOL_NAME)], async () => {
        const e = await offer();
        e.offer.price.public_total = 1;
        return textResult(e);
      }),
    ),
    // §6: an operator's copy of the node's card on the operator's own domain.
    await serveSurface(
      'operator.example',
      operatorCa,
      new Hono().get('/.well-known/agent-card.json', async (c) =>
        c.json(await (await relay(`https://${DOMAIN}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()),
      ),
    ),
  );
  network = { connectTo: [node.connectTo, ...fakes.map((f) => f.connectTo)], ca: [node.ca.certPem, operatorCa.certPem] };
});

afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  await relay?.close();
  await node?.node.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('checkNodeToolBinding (§10)', () => {
  it('a vrpkit node conforms: one name on three surfaces, the three arguments, the endpoint’s own verified offer', async ({ skip }) => {
    skip(!BROWSER);
    const report = await checkNodeToolBinding(DOMAIN, { network, args: ARGS });
    expect(report.endpoint.verification_status).toBe('verified');
    expect(report.names).toEqual({ mcp: [BOUND_TOOL_NAME], a2a: [BOUND_TOOL_NAME], webmcp: [BOUND_TOOL_NAME], one_string: 'pass' });
    for (const s of report.surfaces) {
      expect(s.reached).toBe(true);
      expect(new URL(s.url as string).hostname).toBe(DOMAIN);
      expect({ surface: s.surface, checks: Object.fromEntries(Object.entries(s.checks).map(([k, c]) => [k, c.status])) }).toEqual({
        surface: s.surface,
        checks: { '10.1': 'pass', '10.2': 'pass', '10.3': 'pass' },
      });
      expect(s.report.canonical_domain).toBe(DOMAIN);
      expect(s.report.classification).toBe('node_tool');
    }
    expect(report.conforms).toBe(true);
    expect(JSON.stringify(report)).not.toContain('"jws"'); // the report carries verdicts, not the documents
  }, 90_000);

  it('catches a required extra argument (§10.2) and an operator-domain card (§10.3)', async ({ skip }) => {
    skip(!BROWSER);
    const report = await checkNodeToolBinding(DOMAIN, {
      network,
      args: ARGS,
      surfaceUrls: { mcp: `https://strict.${DOMAIN}/mcp`, a2a: 'https://operator.example' },
    });
    const by = Object.fromEntries(report.surfaces.map((s) => [s.surface, s.checks]));
    expect(by.mcp?.['10.1'].status).toBe('pass');
    expect(by.mcp?.['10.2']).toEqual({ status: 'fail', detail: 'the input schema requires unit beyond check_in, check_out, guests' });
    expect(by.a2a?.['10.3'].status).toBe('fail');
    expect(by.a2a?.['10.3'].detail).toMatch(/not the domain that served the surface/);
    expect(by.webmcp?.['10.3'].status).toBe('pass');
    expect(report.conforms).toBe(false);
  }, 90_000);

  it('catches a prefixed name (§10.1, one string fails) and an edited envelope (§10.3)', async ({ skip }) => {
    skip(!BROWSER);
    const prefixed = await checkNodeToolBinding(DOMAIN, { network, args: ARGS, surfaceUrls: { mcp: `https://acme.${DOMAIN}/mcp` } });
    expect(prefixed.names.mcp).toEqual([`acme_${BOUND_TOOL_NAME}`]);
    expect(prefixed.names.one_string).toBe('fail');
    expect(prefixed.surfaces[0]?.checks['10.1'].status).toBe('fail');
    expect(prefixed.surfaces[0]?.checks['10.3'].status).toBe('unknown');
    expect(prefixed.conforms).toBe(false);

    const edited = await checkNodeToolBinding(DOMAIN, { network, args: ARGS, surfaceUrls: { mcp: `https://edit.${DOMAIN}/mcp` } });
    expect(edited.surfaces[0]?.checks['10.3']).toEqual({
      status: 'fail',
      detail: "the envelope does not verify against the node's JWKS: invalid payload_offer_mismatch",
    });
    expect(edited.conforms).toBe(false);
  }, 120_000);

  it('an unreachable surface is unknown, never a pass', async () => {
    const report = await checkNodeToolBinding(DOMAIN, {
      network: { ...network, connectTimeoutMs: 1_000 },
      args: ARGS,
      surfaceUrls: { mcp: 'https://gone.invalid/mcp', a2a: `https://acme.${DOMAIN}`, webmcp: `https://acme.${DOMAIN}/nothing-here` },
    });
    expect(report.surfaces.map((s) => s.checks['10.1'].status)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(report.names.one_string).toBe('unknown');
    expect(report.conforms).toBe(false);
  }, 90_000);
});

describe('comparableOffer', () => {
  it('ignores issuance time stamps and the offer id, nothing else', async () => {
    const a = (await offer()).offer;
    // The node's signed-offer cache answers a repeated stay with the same bytes, so the later
    // issuance is made here as the node would sign it: another offer id (the booking URL carries it
    // too) and other issuance times.
    const b = JSON.parse(JSON.stringify(a).split(String(a.booking.offer_id)).join('a-later-offer-id')) as typeof a;
    b.generated_at = '2030-01-01T00:00:00Z';
    b.valid_until = '2030-01-01T00:15:00Z';
    expect(a.booking.offer_id).not.toBe(b.booking.offer_id);
    expect(comparableOffer(a)).toBe(comparableOffer(b));
    expect(comparableOffer({ ...a, price: { ...a.price, agent_total: (a.price.agent_total ?? 0) + 1 } })).not.toBe(comparableOffer(b));
    expect(comparableOffer({ ...a, request: { ...a.request, guests: 4 } })).not.toBe(comparableOffer(b));
  });
});
