/**
 * Payments (Tool-Use Binding draft, consequence classes: "If the handler would move funds, a
 * PaymentCandidateAct from [I-D.das-payment] MUST also be enforced before the PSP SDK"). The
 * payment instruction — amount in minor units, currency, payee, idempotency key — is normalized
 * and digested together with the exact request the PSP receives, so a changed amount, currency,
 * payee or any other request field is another act; no request leaves before enforce allows it.
 */
import { snapshotLiveArguments } from '../../act.js';
import { GateError } from '../../errors.js';
import type { MapContext } from '../../host/dispatch-mapped.js';
import { dispatchHostCall, resultOrThrow } from '../../host/host-call.js';

/** The load-bearing fields of a payment (draft-das-payment-execution-finality: amount, currency, beneficiary, rail). */
export interface PaymentInstruction {
  /** Minor units (cents), a positive safe integer. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** Who receives the funds: a connected account, a beneficiary id, or `self` for the merchant's own account. */
  payee: string;
  /** The PSP idempotency key: one key is one act, so a retry is never a second payment. */
  idempotency_key: string;
  /** e.g. `card`, `sepa_debit`; absent when the PSP chooses. */
  rail?: string;
}

/** The live arguments of a payment act: the normalized instruction and the request as sent. */
export interface PaymentLiveArgs<P> {
  payment: PaymentInstruction;
  request: P;
  /** The connected account the request is made on (`Stripe-Account`), when given. */
  account?: string;
}

/** Normalize a payment instruction; malformed ones are refused before any act exists (EF_MALFORMED_ARGUMENTS). */
export function paymentInstruction(p: PaymentInstruction): PaymentInstruction {
  if (!Number.isSafeInteger(p.amount) || p.amount <= 0)
    throw new GateError('EF_MALFORMED_ARGUMENTS', 'a payment amount is a positive integer in minor units');
  if (typeof p.currency !== 'string' || !/^[A-Za-z]{3}$/.test(p.currency))
    throw new GateError('EF_MALFORMED_ARGUMENTS', 'a payment currency is an ISO 4217 code');
  if (typeof p.payee !== 'string' || !p.payee) throw new GateError('EF_MALFORMED_ARGUMENTS', 'a payment names its payee');
  if (typeof p.idempotency_key !== 'string' || !/^[\x21-\x7e]{8,255}$/.test(p.idempotency_key))
    throw new GateError('EF_MALFORMED_ARGUMENTS', 'a payment carries an idempotency key (8–255 printable characters)');
  return {
    amount: p.amount,
    currency: p.currency.toUpperCase(),
    payee: p.payee,
    idempotency_key: p.idempotency_key,
    ...(p.rail ? { rail: p.rail } : {}),
  };
}

/** The PaymentIntent `create` parameters the wrapper reads (structural: Stripe's `PaymentIntentCreateParams` fits). */
export interface PaymentIntentCreateLike {
  amount: number;
  currency: string;
  transfer_data?: { destination?: string };
  on_behalf_of?: string;
  payment_method_types?: string[];
}

/** `paymentIntents` of a PSP client (structural: Stripe's `stripe.paymentIntents` fits). */
export interface PaymentIntentsLike<P extends PaymentIntentCreateLike, R> {
  create(params: P, options?: { idempotencyKey?: string; stripeAccount?: string }): Promise<R>;
}

export interface GatePaymentOptions {
  context: MapContext;
  /** The PSP's identity (`api.stripe.com`): destination of every payment act. */
  psp: string;
  /** tool_id of the acts (default `payment_intents.create`, FINANCIAL under the default classes). */
  toolId?: string;
}

/** The options of a gated `create`: the idempotency key, and the connected account the request is made on (Stripe's `stripeAccount`). */
export interface GatedPaymentCallOptions {
  idempotencyKey: string;
  stripeAccount?: string;
}

/**
 * Gate a PSP client's `paymentIntents.create` (Stripe's shape first): each call becomes a
 * PAYMENT_REQUEST act whose digest covers the instruction (amount, currency, payee, idempotency
 * key) and the whole request. The params are copied once, when `create` is called, before anything
 * is awaited: the limits are checked on that copy and the PSP receives exactly it, whatever the
 * caller's object (or a getter in it) does meanwhile (issue 36 defect 15). The payee is the one
 * account every routing field names — `transfer_data.destination`, `on_behalf_of` and the
 * `stripeAccount` option — else `self`; routing fields naming different accounts are refused
 * (EF_MALFORMED_ARGUMENTS), so a payee allow-list covers every field that can route funds (defect 21).
 * The PSP is called only after enforce allowed it, with the same idempotency key; a deny rejects
 * with a `GateError` carrying the EF code, and nothing is sent. The idempotency key is required:
 * it is the act's id, so a retry returns the recorded payment.
 */
export function gatePaymentIntents<P extends PaymentIntentCreateLike, R>(
  paymentIntents: PaymentIntentsLike<P, R>,
  opts: GatePaymentOptions,
): { create(params: P, options: GatedPaymentCallOptions): Promise<R> } {
  return {
    async create(params, options) {
      const request = snapshotLiveArguments(params).args;
      const account = options?.stripeAccount;
      const payment = paymentInstruction({
        amount: request.amount,
        currency: request.currency,
        payee: payeeOf([request.transfer_data?.destination, request.on_behalf_of, account]),
        idempotency_key: options?.idempotencyKey,
        ...(request.payment_method_types?.length === 1 ? { rail: request.payment_method_types[0] } : {}),
      });
      const args: PaymentLiveArgs<P> = { payment, request, ...(account !== undefined ? { account } : {}) };
      const r = await dispatchHostCall(
        opts.context,
        {
          source: 'payment',
          id: `${opts.psp}:${payment.idempotency_key}`,
          name: opts.toolId ?? 'payment_intents.create',
          args,
          act_type: 'PAYMENT_REQUEST',
          tool_protocol: 'HTTP_API',
          tool_endpoint: `https://${opts.psp}`,
          destination: { destination_id: opts.psp },
        },
        (live) =>
          paymentIntents.create(live.request, {
            idempotencyKey: live.payment.idempotency_key,
            ...(live.account !== undefined ? { stripeAccount: live.account } : {}),
          }),
      );
      return resultOrThrow(r);
    },
  };
}

/** The one account the routing fields name (absent ones aside), `self` when none does; refused when they name several. */
function payeeOf(routing: ReadonlyArray<unknown>): string {
  const named = new Set(routing.filter((v) => v !== undefined && v !== null));
  if (named.size > 1)
    throw new GateError('EF_MALFORMED_ARGUMENTS', 'a payment routes funds to one payee: its routing fields name different accounts');
  const [payee] = named;
  if (payee === undefined) return 'self';
  if (typeof payee !== 'string') throw new GateError('EF_MALFORMED_ARGUMENTS', 'a payment names its payee');
  return payee;
}
