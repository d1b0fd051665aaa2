/**
 * The UCP Lodging Booking MCP binding on a node's `/mcp` (surfaces/mcp/ucp.ts; UCP
 * `lodging/booking/mcp.md`, `services/lodging/mcp.openrpc.json`), driven by the official MCP SDK
 * client over real https, on both MCP revisions the node serves (2025-11-25 through `initialize`,
 * 2026-07-28 through `server/discover`), on SQLite and PostgreSQL: the profile names the MCP
 * endpoint; `tools/list` shows the five Booking tools to a request with `UCP-Agent` and only the
 * offer tool to any other; every `booking` argument and every `structuredContent` validates against
 * the vendored UCP schemas; the flow create → get → update → guest confirms on the host's page →
 * complete runs on the same sessions as REST; a repeated `meta["idempotency-key"]` answers as the
 * first call and writes nothing, another request with it is refused; protocol refusals are JSON-RPC
 * errors with stable codes; a key is forgotten after 48 hours.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { withNodeStore } from '@vrpkit/node';
import { BOUND_TOOL_NAME, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope, UCP_PROFILE_PATH, ucpStayId } from '@vrpkit/protocol';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import {
  guestStep,
  mailedCode,
  TEST_UCP_AGENT_PROFILE,
  UCP_BOOKING_SCHEMA,
  UCP_ERROR_SCHEMA,
  type UcpRequestOp,
  ucpLodgingMcpMethods,
  ucpRequestErrors,
  ucpSchemaErrors,
} from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const pg = pgTestSchemas('ucp-mcp', 'the UCP MCP binding on PostgreSQL');
const START = Date.parse('2027-02-01T09:00:00Z');
const BOOKING_TOOLS = [
  'create_booking_session',
  'get_booking_session',
  'update_booking_session',
  'complete_booking_session',
  'cancel_booking_session',
];

type Json = Record<string, unknown> & { id: string; status: string; messages?: { code: string }[] };

function contract(label: string, databaseUrl: () => string | undefined) {
  let served: { node: import('@vrpkit/node').ServedNode; client: NodeClient };
  let tmp: ReturnType<typeof tempDir>;
  let smtp: TestSmtp;
  let fetch: HardenedFetch;
  let propertyId: string;
  const clock = testClock(START);
  const domain = `${label}.example`;
  const dataDir = () => join(tmp.dir, 'node');
  const url = new URL(`https://${domain}${MCP_ENDPOINT_PATH}`);
  const clients: Client[] = [];

  beforeAll(async () => {
    tmp = tempDir(label);
    smtp = await startTestSmtp();
    const db = databaseUrl();
    served = await serveTestNode(domain, dataDir(), clock, {
      bookingRateLimit: 10_000,
      guestMail: { url: smtp.url, from: `Bookings <bookings@${domain}>` },
      ...(db ? { databaseUrl: db } : {}),
    });
    fetch = createHardenedFetch({ connectTo: [`${domain}:443:127.0.0.1:${served.node.port}`], ca: served.node.caPem! });
    const profile = JSON.parse((await served.client.get(UCP_PROFILE_PATH)).text) as {
      ucp: { capabilities: Record<string, { config: { property: { id: string } } }[]> };
    };
    propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']![0]!.config.property.id;
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await fetch?.close();
    await closeTestNode(served ?? {}, tmp);
    await smtp?.close();
  });

  /** The official SDK client on revision `era`, with the `UCP-Agent` header a UCP platform sends (or none). */
  async function connect(era: 'modern' | 'legacy', ucpAgent = true): Promise<Client> {
    const client = new Client(
      { name: 'ucp-platform-test', version: '1.0.0' },
      era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {},
    );
    const headers: Record<string, string> = ucpAgent ? { 'ucp-agent': `profile="${TEST_UCP_AGENT_PROFILE}"` } : {};
    await client.connect(new StreamableHTTPClientTransport(url, { fetch, requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  const meta = (key?: string) => ({ 'ucp-agent': { profile: TEST_UCP_AGENT_PROFILE }, ...(key ? { 'idempotency-key': key } : {}) });

  /** A Booking tool call whose `booking` and `structuredContent` are checked against the UCP schemas. */
  async function call(client: Client, name: string, args: Record<string, unknown>, schema = UCP_BOOKING_SCHEMA): Promise<Json> {
    const op = { create_booking_session: 'create', update_booking_session: 'update', complete_booking_session: 'complete' }[name];
    if (op && args.booking) expect(ucpRequestErrors(op as UcpRequestOp, UCP_BOOKING_SCHEMA, args.booking)).toEqual([]);
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError ?? false).toBe(false);
    const structured = result.structuredContent as Json;
    expect(ucpSchemaErrors(schema, structured), JSON.stringify(structured).slice(0, 300)).toEqual([]);
    // mcp.md, Business Outcomes: the one text content is the same document.
    expect(JSON.parse((result.content as { type: string; text: string }[])[0]!.text)).toEqual(structured);
    return structured;
  }

  /** A call refused as a protocol error: the JSON-RPC code and the stable UCP code in `data`. */
  async function refusal(client: Client, name: string, args: Record<string, unknown>) {
    try {
      await client.callTool({ name, arguments: args });
    } catch (e) {
      if (e instanceof ProtocolError) return { code: e.code, ucp: (e.data as { code?: string } | undefined)?.code };
      throw e;
    }
    throw new Error(`${name} was not refused`);
  }

  async function offer(from: number, nights: number): Promise<OfferEnvelope> {
    const res = await served.client.get(
      `${OFFER_ENDPOINT_PATH}?check_in=${dayAfter(START, from)}&check_out=${dayAfter(START, from + nights)}&guests=2`,
    );
    return JSON.parse(res.text) as OfferEnvelope;
  }

  const booking = (o: OfferEnvelope, email?: string) => ({
    property: { id: propertyId },
    stays: [
      {
        id: ucpStayId(propertyId),
        stay_dates: { start_date: o.offer.request!.check_in, end_date: o.offer.request!.check_out },
        occupancy: { adults: 2, total: 2 },
      },
    ],
    ...(email ? { booker: { first_name: 'Ada', last_name: 'Guest', email } } : {}),
    'dev.vrpkit.lodging': { offer_jws: o.signature.jws },
  });

  const written = () =>
    withNodeStore({ dataDir: dataDir(), ...(databaseUrl() ? { databaseUrl: databaseUrl()! } : {}) }, async (s) => ({
      sessions: (await s.ucpSessions()).length,
      bookings: (await s.bookingRequests()).length,
      blocks: (await s.listBlocks()).length,
    }));

  it('the profile names the MCP endpoint; tools/list shows the Booking tools to a UCP platform only, the offer tool unchanged', async () => {
    const profile = JSON.parse((await served.client.get(UCP_PROFILE_PATH)).text) as {
      ucp: { services: Record<string, { transport: string; endpoint: string; schema: string }[]> };
    };
    expect(ucpSchemaErrors('profile.json#/$defs/business_schema', profile)).toEqual([]);
    expect(profile.ucp.services['dev.ucp.lodging']!.find((s) => s.transport === 'mcp')).toMatchObject({
      endpoint: url.href,
      schema: expect.stringMatching(/services\/lodging\/mcp\.openrpc\.json$/),
    });
    for (const era of ['legacy', 'modern'] as const) {
      const ucp = (await (await connect(era)).listTools()).tools;
      expect(ucp.map((t) => t.name)).toEqual([BOUND_TOOL_NAME, ...BOOKING_TOOLS]);
      // Each tool's arguments are its OpenRPC method's params, `meta` requiring what the method requires.
      const methods = ucpLodgingMcpMethods();
      expect(methods.map((m) => m.name)).toEqual(BOOKING_TOOLS);
      for (const m of methods) {
        const tool = ucp.find((t) => t.name === m.name)!;
        expect([m.name, Object.keys(tool.inputSchema.properties ?? {})]).toEqual([m.name, m.params.map((p) => p.name)]);
        expect([m.name, tool.inputSchema.required]).toEqual([m.name, m.params.filter((p) => p.required).map((p) => p.name)]);
        expect([m.name, (tool.inputSchema.properties!.meta as { required: string[] }).required]).toEqual([m.name, m.metaRequired]);
      }
      const plain = (await (await connect(era, false)).listTools()).tools;
      expect(plain.map((t) => t.name)).toEqual([BOUND_TOOL_NAME]);
      expect(plain[0]).toEqual(ucp[0]);
    }
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: create → get → update → the guest confirms → complete, a repeated key answering as the first call and writing nothing`, async () => {
      const client = await connect(era);
      const o = await offer(era === 'legacy' ? 20 : 40, 3);
      const blocked = (await written()).blocks;
      const created = await call(client, 'create_booking_session', { meta: meta(), booking: booking(o) });
      expect(created.status).toBe('incomplete');
      const id = created.id;
      expect((await call(client, 'get_booking_session', { meta: meta(), id })).id).toBe(id);
      const email = `mcp-${era}@example.org`;
      const updated = await call(client, 'update_booking_session', { meta: meta(randomUUID()), id, booking: booking(o, email) });
      expect(updated.status).toBe('requires_escalation');
      // No night is held before the guest confirms on the host's page.
      expect((await written()).blocks).toBe(blocked);
      const code = await mailedCode(served.client, domain, smtp, id, email);
      expect((await guestStep(served.client, domain, id, 'confirm', code)).sessionStatus).toBe('ready_for_complete');
      const key = randomUUID();
      const done = await call(client, 'complete_booking_session', { meta: meta(key), id, booking: { payment: {} } });
      expect(done.status).toBe('completed');
      expect(done.confirmation).toMatchObject({ id: expect.any(String) });
      const after = await written();
      const again = await call(client, 'complete_booking_session', { meta: meta(key), id, booking: { payment: {} } });
      expect(again).toEqual(done);
      expect(await written()).toEqual(after);
      // The same key with another request: -32000 idempotency_conflict, nothing run.
      expect(
        await refusal(client, 'complete_booking_session', { meta: meta(key), id, booking: { payment: {}, signals: { x: 1 } } }),
      ).toEqual({ code: -32000, ucp: 'idempotency_conflict' });
      expect(await written()).toEqual(after);
      // A completed session is not canceled here: the session, with its code.
      const cancel = await call(client, 'cancel_booking_session', { meta: meta(randomUUID()), id });
      expect([cancel.status, cancel.messages?.map((m) => m.code)]).toEqual(['completed', expect.arrayContaining(['invalid_status'])]);
    });
  }

  it('refusals: a business outcome is a result with the UCP error response; a protocol error is a JSON-RPC error with a stable code', async () => {
    const client = await connect('modern');
    const o = await offer(60, 2);
    const before = await written();
    // No session can be created: the error response as structuredContent.
    const foreign = await call(
      client,
      'create_booking_session',
      { meta: meta(), booking: { ...booking(o), property: { id: 'not-this-host' } } },
      UCP_ERROR_SCHEMA,
    );
    expect(foreign.messages?.map((m) => m.code)).toEqual(['stay_not_found']);
    const cases: [string, Record<string, unknown>, { code: number; ucp: string }][] = [
      ['create_booking_session', { booking: booking(o) }, { code: -32001, ucp: 'invalid_profile_url' }],
      [
        'create_booking_session',
        { meta: { 'ucp-agent': { profile: 'http://platform.example/' } }, booking: booking(o) },
        { code: -32001, ucp: 'invalid_profile_url' },
      ],
      ['create_booking_session', { meta: meta('not-a-uuid'), booking: booking(o) }, { code: -32602, ucp: 'invalid_idempotency_key' }],
      ['create_booking_session', { meta: meta(), booking: { ...booking(o), id: 'ucs_x' } }, { code: -32602, ucp: 'invalid_request' }],
      ['create_booking_session', { meta: meta(), booking: { property: { id: propertyId } } }, { code: -32602, ucp: 'invalid_request' }],
      ['get_booking_session', { meta: meta() }, { code: -32602, ucp: 'invalid_request' }],
      ['get_booking_session', { meta: meta(), id: 'ucs_nope' }, { code: -32000, ucp: 'not_found' }],
      [
        'complete_booking_session',
        { meta: meta(), id: 'ucs_nope', booking: { payment: {} } },
        { code: -32602, ucp: 'invalid_idempotency_key' },
      ],
      ['cancel_booking_session', { meta: meta(), id: 'ucs_nope' }, { code: -32602, ucp: 'invalid_idempotency_key' }],
      ['cancel_booking_session', { meta: meta(randomUUID()), id: 'ucs_nope' }, { code: -32000, ucp: 'not_found' }],
    ];
    for (const [name, args, expected] of cases) expect([name, await refusal(client, name, args)]).toEqual([name, expected]);
    expect(await written()).toEqual(before);
    // Without the UCP binding's header the tools still answer (meta names the platform); an unknown tool stays the SDK's error.
    const plain = await connect('legacy', false);
    expect((await call(plain, 'create_booking_session', { meta: meta(), booking: booking(o) })).status).toBe('incomplete');
    expect((await refusal(plain, 'delete_booking_session', {})).code).toBe(-32602);
  });

  it('a key is kept 48 hours: a repeat within them answers as the first, after them it is a new request', async () => {
    const client = await connect('modern');
    const key = randomUUID();
    const bare = {
      property: { id: propertyId },
      stays: [
        {
          id: ucpStayId(propertyId),
          stay_dates: { start_date: dayAfter(START, 80), end_date: dayAfter(START, 82) },
          occupancy: { total: 2 },
        },
      ],
    };
    const first = await call(client, 'create_booking_session', { meta: meta(key), booking: bare });
    clock.advance(47 * 3_600_000);
    expect((await call(client, 'create_booking_session', { meta: meta(key), booking: bare })).id).toBe(first.id);
    clock.advance(2 * 3_600_000);
    const later = await call(client, 'create_booking_session', { meta: meta(key), booking: bare });
    expect(later.id).not.toBe(first.id);
  });
}

describe('UCP Booking MCP binding (SQLite)', () => contract('ucp-mcp-sqlite', () => undefined));
describe.skipIf(!pg)('UCP Booking MCP binding (PostgreSQL)', () => contract('ucp-mcp-pg', () => pg?.schemaUrl('ucp')));
