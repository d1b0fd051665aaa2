/**
 * The booking host: a guest's agent host with two tools and a Gate on the invoke arrow, for any
 * model vendor (the example loops feed it Anthropic `tool_use` blocks and OpenAI Responses
 * `function_call` items; `vrp demo --booking` replays recorded ones).
 *
 * - `get_verified_stay_offer` (INFORMATIONAL, a hot envelope): the node's MCP tool, called with
 *   the official MCP client (`getOfferVia('mcp')`); the offer is verified against the node's own
 *   JWKS, its MCP receipt verified and bound to the call, and quoted only when safe to quote
 *   (Core VRP v0.1 §7, Node Tool Binding v0.1 §6–§8). The model gets a short offer id, never a JWS.
 * - `request_booking` (FINANCIAL, a person approves): over the host's UCP Lodging booking sessions
 *   (`UcpLodgingClient`). A session is created from the VERIFIED offer (it blocks nothing); the act
 *   is built from that offer and session (`bookingActFromVerifiedOffer`), never from the model's
 *   words; once authority is issued the session's `continue_url` goes to the person, who confirms on
 *   the host's page; when the session is `ready_for_complete` the Complete request actually about to
 *   be sent is re-derived into a live act (`liveUcpComplete`) and enforced against the approved
 *   authority before a byte goes to the node. The booking receipt is verified after.
 */
import { asRecord, type Clock, type FetchLike } from '@vrpkit/core';
import {
  type ActContext,
  type AgentCandidateAct,
  dispatchMapped,
  EF_CODES,
  type EfCode,
  type EnforceDecision,
  type Gate,
  hostErrorObject,
  type MapContext,
  mapResponsesFunctionCall,
  resolveActContext,
  snapshotLiveArguments,
  type ToolCallOutcome,
  toolUseCall,
} from '@vrpkit/gate';
import type { UcpBooker, UcpSessionView } from '@vrpkit/protocol';
import { JwksCache } from '../jwks-cache.js';
import { getOfferVia } from '../surfaces/index.js';
import type { QuotableTotal, SurfaceReport } from '../surfaces/types.js';
import { UcpLodgingClient } from '../ucp/client.js';
import {
  BOOKING_TOOL,
  type BookingApprovalView,
  type BookingArguments,
  bookingActFromVerifiedOffer,
  bookingRefusalOf,
  bookingTermsOf,
  liveUcpComplete,
} from './act.js';

export const OFFER_TOOL = 'get_verified_stay_offer';

/** The two tools' JSON Schemas, shared by the Anthropic (`input_schema`) and OpenAI (`parameters`) declarations. */
export const BOOKING_TOOL_SPECS = [
  {
    name: OFFER_TOOL,
    description: 'Get the host’s signed, verified offer for a stay. Returns an offer_id and the quote when it is safe to quote.',
    schema: {
      type: 'object' as const,
      properties: { check_in: { type: 'string' }, check_out: { type: 'string' }, guests: { type: 'integer' } },
      required: ['check_in', 'check_out', 'guests'],
      additionalProperties: false,
    },
  },
  {
    name: BOOKING_TOOL,
    description:
      'Book a verified offer with the host. A person approves each booking and confirms it on the host’s page; after approval, call again with the approval_id.',
    schema: {
      type: 'object' as const,
      properties: {
        offer_id: { type: 'string' },
        approval_id: { type: 'string' },
        session_id: { type: 'string' },
        booking_url: { type: 'string' },
      },
      required: ['offer_id'],
      additionalProperties: false,
    },
  },
];

/** What the person sees for one booking act (the approval page or the `approve` callback). */
export interface BookingApprovalRequest {
  candidate_act_id: string;
  view: BookingApprovalView;
}

/** The person booking, as UCP's `booker` with what an identified lead needs (Booking, Business guidelines). */
export type BookingPerson = UcpBooker & { first_name: string; last_name: string; email: string };

/** A session's guest page handed to the person (UCP Booking: the buyer finalises on the business's `continue_url`). */
export interface GuestHandOff {
  session_id: string;
  continue_url: string;
  view: BookingApprovalView;
}

export interface BookingHostOptions {
  gate: Gate;
  /** The node's origin, `https://{canonical_domain}`. */
  nodeUrl: string;
  /** Who the stay is for: from the user's profile, never from the model. */
  booker: BookingPerson;
  /** The host's network edge for every call (MCP, keys, UCP sessions): a `createHardenedFetch`. */
  fetch: FetchLike;
  /** The agent platform's UCP profile URL, sent as `UCP-Agent` on every session request (UCP REST binding). */
  agentProfile: string;
  session_id: string;
  model: string;
  clock?: Clock;
  /** Show the person the session's `continue_url` (a chat link, a notification); resolves once handed over. */
  handOff?: (h: GuestHandOff) => Promise<void>;
  /** How long one `request_booking` waits for the guest to confirm (default 15 minutes, polled every second). */
  guestWait?: { timeoutMs: number; pollMs?: number };
}

/** One step of the flow, for the printed log (ids, digests, codes and the verified values only). */
export type BookingStep =
  | { step: 'offer'; offer_id: string; safe_to_quote: boolean; receipt_verified: boolean; failures: string[]; total: QuotableTotal | null }
  | { step: 'session'; offer_id: string; session_id: string; status: string; continue_url: string | null }
  | { step: 'approval_needed'; approval: BookingApprovalRequest }
  | { step: 'continue'; session_id: string; continue_url: string }
  | { step: 'guest'; session_id: string; status: string }
  | { step: 'denied'; tool: string; code: string; detail?: string }
  | { step: 'booked'; session_id: string; booking_id: string | null; receipt: string }
  | { step: 'node_error'; code: string; detail?: string };

interface HeldOffer {
  report: SurfaceReport;
  jws: string;
}

interface Approved {
  act: AgentCandidateAct;
  args: BookingArguments;
  view: BookingApprovalView;
}

/** The result of one tool block: the outcome (no arguments) and the model-visible text. */
export interface HandledBlock {
  outcome: ToolCallOutcome;
  text: string;
  isError: boolean;
}

export class BookingHost {
  readonly steps: BookingStep[] = [];
  readonly #offers = new Map<string, HeldOffer>();
  readonly #approvals = new Map<string, Approved>();
  /** One UCP session per verified offer, and one hand-off to the guest per session (parallel blocks share them). */
  readonly #sessions = new Map<string, Promise<{ ok: true; session: UcpSessionView } | { ok: false; code: string }>>();
  readonly #guests = new Map<string, Promise<void>>();
  readonly #clients = new Map<string, ReturnType<typeof UcpLodgingClient.discover>>();
  readonly #opts: BookingHostOptions;
  readonly #jwks: JwksCache;

  constructor(opts: BookingHostOptions) {
    this.#opts = opts;
    this.#jwks = new JwksCache({ fetch: opts.fetch, ...(opts.clock ? { clock: opts.clock } : {}) });
  }

  /** The booking act behind an approval id and what the person is shown beside its arguments. */
  approvalFor(candidateActId: string): { act: AgentCandidateAct; view: BookingApprovalView } | undefined {
    return this.#approvals.get(candidateActId);
  }

  mapContext(runtime: string): MapContext {
    return {
      gate: this.#opts.gate,
      session_id: this.#opts.session_id,
      principal: { principal_id: 'guest-workspace', principal_type: 'user' },
      agent: { agent_id: 'booking-agent', runtime_id: runtime, model_id: this.#opts.model, delegation_depth: 0 },
      purpose: { purpose_id: 'book-a-stay', declared_purpose: 'find and book a verified direct offer' },
      instruction_provenance: { source_type: 'user' },
      ...(this.#opts.clock ? { clock: this.#opts.clock } : {}),
    };
  }

  /** Handle one tool block from either vendor. Every block goes through the gate. */
  async handle(vendor: 'anthropic' | 'responses', block: { id: string; name: string; input: unknown }): Promise<HandledBlock> {
    const ctx = this.mapContext(`${vendor}-booking-loop`);
    const actCtx = await resolveActContext(ctx);
    if ('allow' in actCtx) return this.#deny(block, actCtx);
    if (block.name === BOOKING_TOOL) return this.#requestBooking(vendor, block, actCtx);
    const r = await dispatchMapped(
      ctx,
      block,
      () => {
        // The map step: the act and the snapshot its digest covers (the gate digests a call once).
        if (vendor === 'anthropic') return toolUseCall({ type: 'tool_use', id: block.id, name: block.name, input: block.input }, actCtx);
        const live = snapshotLiveArguments(block.input);
        const item = { type: 'function_call' as const, call_id: block.id, name: block.name, arguments: '' };
        return { act: mapResponsesFunctionCall(item, live, actCtx), live };
      },
      (args) => this.#getOffer(args),
      block.name === OFFER_TOOL,
    );
    if (!r.outcome.decision.allow) return this.#deny(block, r.outcome.decision, r.outcome);
    if (r.toolError !== undefined) return { outcome: r.outcome, text: JSON.stringify({ error: { code: 'tool_error' } }), isError: true };
    return { outcome: r.outcome, text: JSON.stringify(r.result), isError: false };
  }

  async #getOffer(input: unknown): Promise<unknown> {
    const a = asRecord(input);
    const args = { check_in: String(a?.check_in), check_out: String(a?.check_out), guests: Number(a?.guests) };
    const report = await getOfferVia('mcp', this.#opts.nodeUrl, args, {
      // One connection pool and one key cache for the whole session (Core VRP v0.1 §3.1 cache policy).
      fetch: this.#opts.fetch,
      jwksCache: this.#jwks,
      ...(this.#opts.clock ? { clock: this.#opts.clock } : {}),
    });
    const jws = asRecord(asRecord(report.envelope)?.signature)?.jws;
    const offer_id = `offer-${this.#offers.size + 1}`;
    if (typeof jws === 'string') this.#offers.set(offer_id, { report, jws });
    const receiptVerified = report.receipt?.verified === true;
    this.steps.push({
      step: 'offer',
      offer_id,
      safe_to_quote: report.safe_to_quote,
      receipt_verified: receiptVerified,
      failures: [...report.failures],
      total: report.total,
    });
    // Quote only what is safe to quote, in the signed values (Core VRP v0.1 §7).
    if (!report.safe_to_quote || !receiptVerified || report.total === null)
      return { offer_id, safe_to_quote: false, failures: report.failures, classification: report.classification };
    const terms = typeof jws === 'string' ? bookingTermsOf(jws) : null;
    return {
      offer_id,
      safe_to_quote: true,
      canonical_domain: report.canonical_domain,
      stay: terms ? { check_in: terms.check_in, check_out: terms.check_out, guests: terms.guests } : null,
      total: report.total,
    };
  }

  async #requestBooking(
    vendor: 'anthropic' | 'responses',
    block: { id: string; name: string; input: unknown },
    actCtx: ActContext,
  ): Promise<HandledBlock> {
    const input = asRecord(block.input);
    const offerId = input?.offer_id;
    const held = typeof offerId === 'string' ? this.#offers.get(offerId) : undefined;
    // An offer the host never verified cannot be booked: no act, no request.
    if (!held || typeof offerId !== 'string') return this.#deny(block, decision('EF_NOT_AUTHORIZED'), undefined, 'unknown offer_id');
    const refusal = bookingRefusalOf(held.report, held.jws);
    if (refusal) return this.#deny(block, decision('EF_NOT_AUTHORIZED'), undefined, refusal.code);
    const domain = bookingTermsOf(held.jws)?.canonical_domain ?? '';
    const found = await this.#client(domain);
    if (!found.ok) return this.#nodeError(block, found.code, found.message);
    const { client } = found;
    const session = await this.#sessionFor(offerId, held, client);
    if (!session.ok) return this.#nodeError(block, session.code);
    const approvalId = input?.approval_id;
    let approved: Approved | undefined;
    if (typeof approvalId === 'string') {
      approved = this.#approvals.get(approvalId);
      if (!approved) return this.#deny(block, decision('EF_002'), undefined, 'unknown approval_id');
    } else {
      const built = bookingActFromVerifiedOffer(
        held.report,
        held.jws,
        { endpoint: client.endpoint, session: session.session },
        { context: actCtx, blockId: block.id, vendor },
      );
      if (!built.ok) return this.#deny(block, decision('EF_NOT_AUTHORIZED'), undefined, built.code);
      approved = { act: built.act, args: built.args, view: built.approval };
      this.#approvals.set(built.act.candidate_act_id, approved);
      const auth = await this.#opts.gate.authorize(built.act);
      if (auth.status === 'escalated') {
        const approval = { candidate_act_id: built.act.candidate_act_id, view: built.approval };
        this.steps.push({ step: 'approval_needed', approval });
        return {
          outcome: outcomeOf(block, built.act, decision('EF_APPROVAL_REQUIRED')),
          text: JSON.stringify({ ...hostErrorObject(decision('EF_APPROVAL_REQUIRED')), approval_id: built.act.candidate_act_id }),
          isError: true,
        };
      }
      if (auth.status !== 'issued')
        return this.#deny(block, decision(auth.code as EfCode), outcomeOf(block, built.act, decision(auth.code as EfCode)));
    }
    // The Complete as it will be sent (a host that follows the model): to the endpoint the model named,
    // for the session it named, else the node's endpoint and the session of the offer it named.
    const liveId = typeof input?.session_id === 'string' ? input.session_id : session.session.id;
    const endpoint = typeof input?.booking_url === 'string' ? input.booking_url : client.endpoint;
    // Only the approved session goes to the person: another one is refused at dispatch, never confirmed.
    if (liveId === approved.args.session_id && endpoint === approved.act.tool.tool_endpoint) {
      const ready = await this.#guestConfirms(approved.view, client);
      if (ready) return ready(block, approved.act);
    }
    const current = await client.getSession(liveId);
    const live = liveUcpComplete(approved.act, { endpoint, session_id: liveId, session: current.ok ? current.session : null });
    const offerJws = current.ok ? current.session['dev.vrpkit.lodging'].offer_jws : '';
    // After an allow the live endpoint is the approved one (enforce compared them), the pinned client's.
    const r = await this.#opts.gate.dispatch(live.act, live.args, () => this.#complete(client, liveId, offerJws));
    const outcome = outcomeOf(block, live.act, r.decision, r.invoked);
    if (!r.decision.allow) {
      this.steps.push({ step: 'denied', tool: BOOKING_TOOL, code: r.decision.code ?? 'EF_FAIL_CLOSED' });
      // A retried act gets the recorded result, never a second request (Tool-Use Binding draft, retries).
      return { outcome, text: JSON.stringify(r.result ?? hostErrorObject(r.decision)), isError: r.result === undefined };
    }
    return { outcome, text: JSON.stringify(r.result), isError: false };
  }

  /** The host's UCP client for `domain` (the verified offer's): its profile read once, its REST endpoint on that origin only. */
  async #client(domain: string) {
    let found = this.#clients.get(domain);
    if (!found) {
      found = UcpLodgingClient.discover(domain, {
        fetch: this.#opts.fetch,
        agentProfile: this.#opts.agentProfile,
        ...(this.#opts.clock ? { clock: this.#opts.clock } : {}),
      });
      this.#clients.set(domain, found);
    }
    return found;
  }

  /** Create Booking Session from the verified offer, once per offer, with the person as booker: it blocks no night. */
  #sessionFor(offerId: string, held: HeldOffer, client: UcpLodgingClient) {
    let s = this.#sessions.get(offerId);
    if (!s) {
      s = client.createSession(held.jws, { booker: this.#opts.booker }).then((r) => {
        if (!r.ok) return { ok: false as const, code: r.messages?.map((m) => m.code).join(', ') || r.code };
        const { session } = r;
        this.steps.push({
          step: 'session',
          offer_id: offerId,
          session_id: session.id,
          status: session.status,
          continue_url: session.continue_url ?? null,
        });
        return { ok: true as const, session };
      });
      this.#sessions.set(offerId, s);
    }
    return s;
  }

  /**
   * Hand the approved session's `continue_url` to the person and wait until the session is ready for
   * Complete (or already completed). Null when it is; else the answer for the model (still waiting,
   * or the session ended), the authority left unused.
   */
  async #guestConfirms(
    view: BookingApprovalView,
    client: UcpLodgingClient,
  ): Promise<((block: { id: string; name: string }, act: AgentCandidateAct) => HandledBlock) | null> {
    const id = view.session_id;
    if (!this.#guests.has(id) && view.continue_url && this.#opts.handOff) {
      this.steps.push({ step: 'continue', session_id: id, continue_url: view.continue_url });
      this.#guests.set(id, this.#opts.handOff({ session_id: id, continue_url: view.continue_url, view }));
    }
    await this.#guests.get(id);
    const r = await client.waitForGuest(id, this.#opts.guestWait ?? { timeoutMs: 15 * 60_000 });
    const status = r.ok ? r.session.status : r.code;
    this.steps.push({ step: 'guest', session_id: id, status });
    if (status === 'ready_for_complete' || status === 'completed') return null;
    const waiting = { booked: false, session_id: id, status, continue_url: view.continue_url };
    return (block, act) => ({
      outcome: outcomeOf(block, act, decision('EF_APPROVAL_REQUIRED')),
      text: JSON.stringify(waiting),
      isError: true,
    });
  }

  /** Complete Booking Session (the one effect the authority covers), then the booking receipt verified against the offer. */
  async #complete(client: UcpLodgingClient, id: string, offerJws: string): Promise<unknown> {
    const r = await client.complete(id, offerJws);
    if (!r.ok) {
      this.steps.push({ step: 'node_error', code: r.code, ...(r.messages ? { detail: r.messages.map((m) => m.code).join(', ') } : {}) });
      return { booked: false, session_id: id, code: r.code };
    }
    const bookingId = r.receipt.receipt?.booking_id ?? null;
    this.steps.push({ step: 'booked', session_id: id, booking_id: bookingId, receipt: r.receipt.status });
    return {
      booked: true,
      session_id: id,
      status: r.session.status,
      confirmation: r.session.confirmation ?? null,
      receipt: r.receipt.status,
    };
  }

  #nodeError(block: { id: string; name: string }, code: string, detail?: string): HandledBlock {
    this.steps.push({ step: 'node_error', code, ...(detail ? { detail } : {}) });
    return {
      outcome: { id: block.id, name: block.name, decision: decision('EF_NOT_AUTHORIZED'), invoked: false },
      text: JSON.stringify({ booked: false, code }),
      isError: true,
    };
  }

  #deny(block: { id: string; name: string }, d: EnforceDecision, outcome?: ToolCallOutcome, detail?: string): HandledBlock {
    this.steps.push({ step: 'denied', tool: block.name, code: d.code ?? 'EF_FAIL_CLOSED', ...(detail ? { detail } : {}) });
    return {
      outcome: outcome ?? { id: block.id, name: block.name, decision: d, invoked: false },
      text: JSON.stringify(hostErrorObject(d)),
      isError: true,
    };
  }
}

function decision(code: EfCode): EnforceDecision {
  return { allow: false, code, message: EF_CODES[code].message };
}

function outcomeOf(block: { id: string; name: string }, act: AgentCandidateAct, d: EnforceDecision, invoked = false): ToolCallOutcome {
  return {
    id: block.id,
    name: block.name,
    candidate_act_id: act.candidate_act_id,
    arguments_digest: act.arguments_digest.value,
    decision: d,
    invoked,
  };
}
