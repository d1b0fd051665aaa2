/**
 * The booking tests' world: a real vrpkit node over https (dev CA) whose request log counts every
 * Complete Booking Session request (the one call that books), a local SMTP server the node mails the
 * guest's code to, an operator's MCP surface on another domain relaying the node's offer, and a
 * guest's booking host with a real Gate on a SQLite file whose guest confirms on the host's page.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BookingHost, createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { type Clock, generateEd25519Jwk } from '@vrpkit/core';
import { type AgentCandidateAct, actBindingDigest, Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { confirmOnGuestPage, createDevCa, type DevMailbox, initNode, type ServedNode, serveNode, startDevMailbox } from '@vrpkit/node';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { mcpApp, serveSurface, type TestSurface, textResult, tool } from '@vrpkit/testkit/surfaces';
import { TEST_UCP_AGENT_PROFILE } from '@vrpkit/testkit/ucp';
import { Hono } from 'hono';
import { BOOKING_POLICY_FILE, DEMO_BOOKER } from '../src/booking-loop.js';

/** Another host name, not the node's: the page an injected link leads to. */
export const LOOKALIKE_DOMAIN = 'villa-booking.example-stays.example';

export const NODE_DOMAIN = 'villa-booking.example';
export const OPERATOR_DOMAIN = 'stays-operator.example';

export interface BookingWorld {
  dir: string;
  node: ServedNode;
  dataDir: string;
  /** Complete Booking Session requests that reached the node (counted from the node's own request log). */
  completes: () => number;
  /** `/book` form posts that reached the node (each creates a UCP session, which holds nothing yet). */
  bookPosts: () => number;
  /** Where the node's mail to the guest arrives. */
  mailbox: DevMailbox;
  operator: TestSurface;
  /** A look-alike origin an injected link leads to: a copy of the node's pages under another name. */
  lookalike: TestSurface;
  network: { connectTo: string[]; ca: string[] };
  fetch: HardenedFetch;
  close(): Promise<void>;
}

export async function startBookingWorld(clock: Clock): Promise<BookingWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-booking-'));
  const dataDir = join(dir, NODE_DOMAIN);
  await initNode({ domain: NODE_DOMAIN, dataDir, clock });
  let completes = 0;
  let bookPosts = 0;
  const mailbox = await startDevMailbox();
  const node = await serveNode({
    dataDir,
    dev: true,
    port: 0,
    clock,
    guestMail: { url: mailbox.url },
    log: (entry) => {
      if (entry.method === 'POST' && /^\/ucp\/v1\/booking-sessions\/[^/]+\/complete$/.test(entry.path)) completes++;
      if (entry.method === 'POST' && entry.path === '/book') bookPosts++;
    },
  });
  const nodeCa = readFileSync(join(dataDir, 'tls', 'ca.pem'), 'utf8');
  const nodeConnect = `${NODE_DOMAIN}:443:127.0.0.1:${node.port}`;
  const relay = createHardenedFetch({ connectTo: [nodeConnect], ca: [nodeCa] });
  const operatorCa = await createDevCa({ commonName: 'booking operator test CA' });
  // Node Tool Binding v0.1 §6, §7: an operator's tool on its own domain relays the node's genuine offer.
  const operator = await serveSurface(
    OPERATOR_DOMAIN,
    operatorCa,
    mcpApp([tool(BOUND_TOOL_NAME)], async (_name, args) => {
      const q = new URLSearchParams({ check_in: String(args.check_in), check_out: String(args.check_out), guests: String(args.guests) });
      return textResult(await (await relay(`https://${NODE_DOMAIN}/api/verified-stay-offer?${q}`)).json());
    }),
  );
  // The node answers only to its own name (421 otherwise), so a phishing copy is a server of its
  // own that fetches the node's pages and serves them as its own (the form posts to itself).
  const lookalike = await serveSurface(
    LOOKALIKE_DOMAIN,
    operatorCa,
    new Hono().get('*', async (c) => {
      const url = new URL(c.req.url);
      const page = await relay(`https://${NODE_DOMAIN}${url.pathname}${url.search}`);
      return c.html(await page.text(), page.status as 200);
    }),
  );
  const network = { connectTo: [nodeConnect, operator.connectTo, lookalike.connectTo], ca: [nodeCa, operatorCa.certPem] };
  const fetch = createHardenedFetch(network);
  return {
    dir,
    node,
    dataDir,
    completes: () => completes,
    bookPosts: () => bookPosts,
    mailbox,
    operator,
    lookalike,
    network,
    fetch,
    async close() {
      await fetch.close();
      await relay.close();
      await operator.close();
      await lookalike.close();
      await node.close();
      await mailbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const SINK_ID = 'booking-host-dispatch';

/** A guest's booking host on `nodeUrl` with its own Gate (a new SQLite file each time). */
export async function openBookingHost(
  world: BookingWorld,
  opts: { clock: Clock; nodeUrl?: string; approve?: (act: AgentCandidateAct) => Promise<boolean>; name?: string; model?: string },
): Promise<{ host: BookingHost; gate: Gate; storeFile: string; approve(approvalId: string): Promise<void> }> {
  const { privateJwk } = await generateEd25519Jwk();
  const storeFile = join(world.dir, `${opts.name ?? 'gate'}-${Math.random().toString(36).slice(2)}.sqlite`);
  const gate = new Gate({
    store: await openSqliteStore(storeFile),
    policy: loadPolicy(BOOKING_POLICY_FILE),
    sinkId: SINK_ID,
    signingKey: { privateJwk, kid: 'booking-gate-key' },
    clock: opts.clock,
    ...(opts.approve ? { approve: opts.approve } : {}),
  });
  const host = new BookingHost({
    gate,
    nodeUrl: opts.nodeUrl ?? `https://${NODE_DOMAIN}`,
    booker: DEMO_BOOKER,
    fetch: world.fetch,
    agentProfile: TEST_UCP_AGENT_PROFILE,
    session_id: `booking-${opts.name ?? 'test'}`,
    model: opts.model ?? 'recorded-model',
    clock: opts.clock,
    // The guest confirms on the host's page with the code the node mailed.
    handOff: (h) => confirmOnGuestPage(world.fetch, world.mailbox, h.continue_url, DEMO_BOOKER.email, () => {}),
    guestWait: { timeoutMs: 10_000, pollMs: 50 },
  });
  return {
    host,
    gate,
    storeFile,
    // A person approves exactly the binding they reviewed (`vrp gate approve ACT_ID --digest …`).
    async approve(approvalId) {
      const held = host.approvalFor(approvalId);
      if (!held) throw new Error(`no booking act ${approvalId}`);
      const r = await gate.approve(approvalId, 'guest@example.test', actBindingDigest(held.act, SINK_ID));
      if (r.status !== 'issued') throw new Error(`approval not issued: ${r.code}`);
    },
  };
}
