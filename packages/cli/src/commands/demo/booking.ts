/**
 * `vrp demo --booking`: the gated direct-booking scenario (docs/booking.md) over UCP Lodging booking
 * sessions against a local demo node, driven by the recorded model responses of the example loop
 * (examples/recordings/booking-anthropic-messages.json): the offer fetched over MCP and verified,
 * its MCP receipt bound to the call, the quote, the session made from that offer, the person's
 * approval (`--yes`, or how to give it), the guest confirming on the host's page with the code the
 * node mailed (to a local SMTP server the demo runs), the Complete enforced by the gate and the
 * verified booking receipt. No model is called, no key is needed and no mail leaves the machine.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BookingHost, type BookingStep, createHardenedFetch } from '@vrpkit/agent';
import { fixedClock, generateEd25519Jwk } from '@vrpkit/core';
import { type AgentCandidateAct, actBindingDigest, Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { confirmOnGuestPage, initNode, serveNode, startDevMailbox } from '@vrpkit/node';
import { CliError } from '../../errors.js';

/** The example loop's recording and policy, in the repository the demo runs from. */
const REPO = new URL('../../../../../', import.meta.url);
const RECORDING = fileURLToPath(new URL('examples/recordings/booking-anthropic-messages.json', REPO));
const POLICY = fileURLToPath(new URL('examples/booking-policy.yaml', REPO));
/** The recordings were made at this instant; the demo node and the guest's host run on it, so the recorded stay stays bookable. */
const RECORDED_AT = '2027-03-01T09:00:00Z';
const DOMAIN = 'villa-booking.example';
const SINK_ID = 'demo-booking-host';
const BOOKER = { first_name: 'Alice', last_name: 'Example', email: 'alice@example.com' };

interface RecordedBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export interface DemoBookingOptions {
  dir: string;
  yes: boolean;
  out: (line: string) => void;
}

function money(total: number, currency: string): string {
  return `${currency} ${(total / 100).toFixed(2)}`;
}

function describeStep(s: BookingStep): string {
  switch (s.step) {
    case 'offer':
      return s.safe_to_quote && s.receipt_verified && s.total
        ? [
            `  ✓ offer ${s.offer_id} fetched over MCP; signature verified against the node's JWKS`,
            '  ✓ MCP receipt verified and bound to the call that fetched it',
            `  ✓ safe to quote: ${money(s.total.amount, s.total.currency)} (the signed agent_total)`,
          ].join('\n')
        : `  ✗ offer ${s.offer_id} is not safe to quote (${s.failures.join(', ') || 'receipt not verified'})`;
    case 'approval_needed':
      return `  … approval needed for ${s.approval.candidate_act_id}: ${s.approval.view.summary}`;
    case 'denied':
      return `  ✗ ${s.tool} denied: ${s.code}${s.detail ? ` (${s.detail})` : ''}`;
    case 'session':
      return `  ✓ UCP booking session ${s.session_id} created from the verified offer: ${s.status} (no night held yet)`;
    case 'continue':
      return `  → continue_url handed to the guest: ${s.continue_url}`;
    case 'guest':
      return `  ✓ session ${s.session_id} is ${s.status}`;
    case 'booked':
      return `  ✓ session ${s.session_id} completed: booking ${s.booking_id}; booking receipt ${s.receipt}`;
    case 'node_error':
      return `  ✗ the node refused: ${s.code}${s.detail ? ` (${s.detail})` : ''}`;
  }
}

/** Run the scenario; returns the booking id of the completed session's hold, or null when it stopped (approval pending, a deny). */
export async function runDemoBooking(o: DemoBookingOptions): Promise<string | null> {
  if (!existsSync(RECORDING) || !existsSync(POLICY)) throw new CliError('demo_files_missing');
  const recording = JSON.parse(readFileSync(RECORDING, 'utf8')) as Array<{ content: RecordedBlock[] }>;
  const dataDir = resolve(o.dir);
  // A fresh node every run: the recorded stay is free again, and `bookings list` shows this run's hold.
  rmSync(dataDir, { recursive: true, force: true });
  const clock = fixedClock(Date.parse(RECORDED_AT));
  await initNode({ domain: DOMAIN, dataDir, clock });
  // The guest's one-time code travels by real SMTP, to a server that lives as long as the demo.
  const mailbox = await startDevMailbox();
  const node = await serveNode({ dataDir, dev: true, port: 0, clock, guestMail: { url: mailbox.url } });
  const network = { connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: [readFileSync(node.caFile!, 'utf8')] };
  const fetch = createHardenedFetch(network);
  const { privateJwk } = await generateEd25519Jwk();
  let host: BookingHost | undefined;
  const approve = async (act: AgentCandidateAct): Promise<boolean> => {
    const view = host?.approvalFor(act.candidate_act_id)?.view;
    if (!view) return false;
    flush();
    o.out(
      `  ? approve ${view.canonical_domain}, ${view.check_in} → ${view.check_out}, ${view.guests} guests, ${money(view.total, view.currency)}`,
    );
    o.out(`    (act ${act.candidate_act_id}, binding ${actBindingDigest(act, SINK_ID)}): approved by --yes`);
    return true;
  };
  const gateDb = join(dataDir, 'gate.sqlite');
  const gate = new Gate({
    store: await openSqliteStore(gateDb),
    policy: loadPolicy(POLICY),
    sinkId: SINK_ID,
    signingKey: { privateJwk, kid: 'demo-booking-gate' },
    clock,
    ...(o.yes ? { approve } : {}),
  });
  host = new BookingHost({
    gate,
    nodeUrl: `https://${DOMAIN}`,
    booker: BOOKER,
    fetch,
    // The demo agent's UCP profile URL (`UCP-Agent`): named, never fetched by the node (docs/booking.md).
    agentProfile: 'https://demo-agent.vrpkit.example/.well-known/ucp',
    session_id: 'demo-booking',
    model: 'recorded',
    clock,
    // With --yes the demo is also the guest: it confirms on the host's page with the mailed code.
    handOff: async (h) => {
      flush();
      await confirmOnGuestPage(fetch, mailbox, h.continue_url, BOOKER.email, o.out);
    },
    guestWait: { timeoutMs: 10_000, pollMs: 100 },
  });
  let bookingId: string | null = null;
  let printed = 0;
  let pending = false;
  /** Print the host's steps so far, in order with what the person and the guest do in between. */
  function flush(): void {
    for (const s of host?.steps.slice(printed) ?? []) {
      o.out(describeStep(s));
      if (s.step === 'booked' && s.receipt === 'verified') bookingId = s.booking_id;
      if (s.step === 'approval_needed') pending = true;
    }
    printed = host?.steps.length ?? 0;
  }
  try {
    o.out(
      `demo node ${node.origin} (listening on ${node.address}:${node.port}, clock ${RECORDED_AT}), data in ${relative(process.cwd(), dataDir) || dataDir}`,
    );
    for (const message of recording) {
      for (const b of message.content) {
        if (b.type === 'text' && b.text) o.out(`model: ${b.text}`);
        if (b.type !== 'tool_use' || !b.id || !b.name) continue;
        o.out(`tool call ${b.name} ${JSON.stringify(b.input)}`);
        await host.handle('anthropic', { id: b.id, name: b.name, input: b.input });
        flush();
        if (pending) {
          // FINANCIAL is never issued automatically: a person approves exactly this offer.
          o.out(
            '    a person must approve this booking: run again with --yes to approve it as that person (npm run vrp -- demo --booking --yes)',
          );
          return null;
        }
      }
    }
    return bookingId;
  } finally {
    await gate.close();
    await fetch.close();
    await node.close();
    await mailbox.close();
  }
}
