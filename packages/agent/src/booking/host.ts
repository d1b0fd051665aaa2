/**
 * The booking host: a guest's agent host with two tools and a Gate on the invoke arrow, for any
 * model vendor (the example loops feed it Anthropic `tool_use` blocks and OpenAI Responses
 * `function_call` items; `vrp demo --booking` replays recorded ones).
 *
 * - `get_verified_stay_offer` (INFORMATIONAL, a hot envelope): the node's MCP tool, called with
 *   the official MCP client (`getOfferVia('mcp')`); the offer is verified against the node's own
 *   JWKS, its MCP receipt verified and bound to the call, and quoted only when safe to quote
 *   (Core VRP v0.1 §7, Node Tool Binding v0.1 §6–§8). The model gets a short offer id, never a JWS.
 * - `request_booking` (FINANCIAL, a person approves): the act is built from the VERIFIED offer
 *   (`bookingActFromVerifiedOffer`), never from the model's words; the request actually sent is
 *   re-derived into a live act (`liveBookingRequest`) and enforced against the approved
 *   authority before a byte goes to the node. The node's receipt is verified after.
 */
import { asRecord, type Clock, type FetchLike, sha256Hex } from '@vrpkit/core';
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
import type { BookingGuest } from '@vrpkit/protocol';
import { JwksCache } from '../jwks-cache.js';
import { getOfferVia } from '../surfaces/index.js';
import type { QuotableTotal, SurfaceReport } from '../surfaces/types.js';
import {
  BOOKING_TOOL,
  type BookingApprovalView,
  type BookingArguments,
  bookingActFromVerifiedOffer,
  bookingEndpoint,
  bookingTermsOf,
  liveBookingRequest,
} from './act.js';
import { verifyBookingReceipt } from './receipt.js';

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
      'Ask the host to hold a verified offer for the guest. A person approves each booking; after approval, call again with the approval_id.',
    schema: {
      type: 'object' as const,
      properties: { offer_id: { type: 'string' }, approval_id: { type: 'string' }, booking_url: { type: 'string' } },
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

export interface BookingHostOptions {
  gate: Gate;
  /** The node's origin, `https://{canonical_domain}`. */
  nodeUrl: string;
  guest: BookingGuest;
  /** The host's network edge for every call (MCP, keys, the booking POST): a `createHardenedFetch`. */
  fetch: FetchLike;
  session_id: string;
  model: string;
  clock?: Clock;
}

/** One step of the flow, for the printed log (ids, digests, codes and the verified values only). */
export type BookingStep =
  | { step: 'offer'; offer_id: string; safe_to_quote: boolean; receipt_verified: boolean; failures: string[]; total: QuotableTotal | null }
  | { step: 'approval_needed'; approval: BookingApprovalRequest }
  | { step: 'denied'; tool: string; code: string; detail?: string }
  | { step: 'hold'; status: number; booking_id: string | null; receipt: string }
  | { step: 'node_error'; status: number; code: string };

interface HeldOffer {
  report: SurfaceReport;
  jws: string;
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
  readonly #approvals = new Map<string, { act: AgentCandidateAct; args: BookingArguments; view: BookingApprovalView }>();
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
    if (!held) return this.#deny(block, decision('EF_NOT_AUTHORIZED'), undefined, 'unknown offer_id');
    const approvalId = input?.approval_id;
    let approved: { act: AgentCandidateAct; args: BookingArguments; view: BookingApprovalView } | undefined;
    if (typeof approvalId === 'string') {
      approved = this.#approvals.get(approvalId);
      if (!approved) return this.#deny(block, decision('EF_002'), undefined, 'unknown approval_id');
    } else {
      const built = bookingActFromVerifiedOffer(held.report, held.jws, this.#opts.guest, { context: actCtx, blockId: block.id, vendor });
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
    // The request as it will be sent: where the model asked it to go (a host that follows the
    // model), the offer the model named now. enforce() compares both with the approval.
    const endpoint = typeof input?.booking_url === 'string' ? input.booking_url : bookingEndpoint(approved.view.booking_origin);
    const live = liveBookingRequest(approved.act, {
      endpoint,
      offer_jws: held.jws,
      guest: this.#opts.guest,
      idempotency_key: `vrpkit-${sha256Hex(approved.act.candidate_act_id).slice(0, 40)}`,
    });
    const r = await this.#opts.gate.dispatch(live.act, live.args, () => this.#post(endpoint, live.body, held.jws));
    const outcome = outcomeOf(block, live.act, r.decision, r.invoked);
    if (!r.decision.allow) {
      this.steps.push({ step: 'denied', tool: BOOKING_TOOL, code: r.decision.code ?? 'EF_FAIL_CLOSED' });
      // A retried act gets the recorded result, never a second request (Tool-Use Binding draft, retries).
      return { outcome, text: JSON.stringify(r.result ?? hostErrorObject(r.decision)), isError: r.result === undefined };
    }
    return { outcome, text: JSON.stringify(r.result), isError: false };
  }

  /** POST the booking request, then verify the node's signed receipt against its JWKS. */
  async #post(endpoint: string, body: unknown, offerJws: string): Promise<unknown> {
    const res = await this.#opts.fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = asRecord(await res.json().catch(() => null));
    if (res.status !== 200 && res.status !== 201) {
      const code = String(asRecord(json?.error)?.code ?? 'node_error');
      this.steps.push({ step: 'node_error', status: res.status, code });
      return { booked: false, status: res.status, code };
    }
    const terms = bookingTermsOf(offerJws);
    const receipt = await verifyBookingReceipt(json?.receipt_jws, {
      domain: terms?.canonical_domain ?? '',
      offerJws,
      fetch: this.#opts.fetch,
      jwksCache: this.#jwks,
      ...(this.#opts.clock ? { clock: this.#opts.clock } : {}),
    });
    const booking = asRecord(json?.booking_request);
    const bookingId = typeof booking?.booking_id === 'string' ? booking.booking_id : null;
    this.steps.push({ step: 'hold', status: res.status, booking_id: bookingId, receipt: receipt.status });
    return { booked: receipt.status === 'verified', booking_request: booking, receipt: receipt.status, receipt_code: receipt.code };
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
