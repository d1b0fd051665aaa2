/**
 * The booking request (a vrpkit record: Core VRP v0.1 stops at `direct_booking_url`): one of the
 * node's own signed offers with the guest's contact details, from which the node re-quotes live and
 * either holds the dates (a `pending` booking request) or refuses with the current signed offer. It
 * is no longer an HTTP endpoint: a UCP booking session makes it when the guest confirms on the
 * host's page, and the completed session carries its signed receipt. The node side and the agent
 * side share these shapes.
 */
import { isDisplaySafeText } from '@vrpkit/core';
import * as z from 'zod';
import { BOOKING_CODES, registryView } from './errors.js';
import { IsoDateSchema, IsoDateTimeSchema } from './types.js';

/** Largest booking request (and `/book` form) accepted, in bytes (an offer JWS is ~5 KB). */
export const MAX_BOOKING_REQUEST_BYTES = 16 * 1024;
/** The receipt's protected-header `typ`. */
export const BOOKING_RECEIPT_TYP = 'vrpkit-booking-receipt+jws';
/** The receipt payload's `type`. */
export const BOOKING_RECEIPT_TYPE = 'vrpkit_booking_request_receipt';
export const BOOKING_RECEIPT_VERSION = '0.1';

export type BookingErrorCode = (typeof BOOKING_CODES)[number];

/** Stable error codes of the booking-request endpoint, with the HTTP status each is answered with: the registry's booking group. */
export const BOOKING_ERRORS: Readonly<Record<BookingErrorCode, number>> = registryView(BOOKING_CODES, (e) => e.status);

/** A booking request's lifecycle: a hold is `pending` until the host confirms or declines it, or it expires. */
export const BookingStatusSchema = z.enum(['pending', 'confirmed', 'declined', 'expired']);
export type BookingStatus = z.infer<typeof BookingStatusSchema>;

// A guest's fields are text from outside that the host reads in a terminal (`vrp node bookings`)
// and on pages: core's character class (controls, bidi controls, separators, default-ignorables) is refused.
const displaySafe = { message: 'control and bidirectional-override characters are not accepted' };

/** The guest's contact details: kept in the node's store only, never logged, never sent to a webhook. */
export const BookingGuestSchema = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .refine((s) => isDisplaySafeText(s), displaySafe),
  email: z
    .email()
    .max(254)
    .refine((s) => isDisplaySafeText(s), displaySafe),
  phone: z
    .string()
    // The pattern admits no unsafe character.
    .regex(/^\+?[0-9 ()./-]{4,32}$/)
    .optional(),
});
export type BookingGuest = z.infer<typeof BookingGuestSchema>;

/** A booking request: what the booking desk decides (from a confirmed UCP session). */
export const BookingRequestSchema = z.strictObject({
  /** A compact JWS of a `verified_stay_offer` signed by the node it is sent to. */
  offer_jws: z
    .string()
    .max(MAX_BOOKING_REQUEST_BYTES)
    .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
  guest: BookingGuestSchema,
  /** Chosen by the client; the same key and body return the same booking request. */
  idempotency_key: z.string().regex(/^[A-Za-z0-9._:-]{8,128}$/),
});
export type BookingRequest = z.infer<typeof BookingRequestSchema>;

const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/);
const BookingIdSchema = z.string().regex(/^br_[A-Za-z0-9_-]{8,64}$/);

/** The signed receipt's payload: what the node holds, for which stay and total, made from which offer. */
export const BookingReceiptPayloadSchema = z.strictObject({
  type: z.literal(BOOKING_RECEIPT_TYPE),
  version: z.literal(BOOKING_RECEIPT_VERSION),
  canonical_domain: z.string().min(1),
  booking_id: BookingIdSchema,
  status: BookingStatusSchema,
  stay: z.strictObject({ check_in: IsoDateSchema, check_out: IsoDateSchema, guests: z.number().int().min(1) }),
  /** The offer's `price.agent_total`, in minor units. */
  total: z.number().int().min(0),
  currency: z.string().regex(/^[A-Z]{3}$/),
  hold_expires_at: IsoDateTimeSchema,
  /** Lowercase hex SHA-256 of the offer JWS's ASCII bytes. */
  offer_jws_sha256: Sha256HexSchema,
  issued_at: IsoDateTimeSchema,
});
export type BookingReceiptPayload = z.infer<typeof BookingReceiptPayloadSchema>;

/** The `booking_request` member of a success response. */
export const BookingRequestViewSchema = z.strictObject({
  booking_id: BookingIdSchema,
  status: BookingStatusSchema,
  check_in: IsoDateSchema,
  check_out: IsoDateSchema,
  guests: z.number().int().min(1),
  currency: z.string().regex(/^[A-Z]{3}$/),
  total: z.number().int().min(0),
  hold_expires_at: IsoDateTimeSchema,
  offer_jws_sha256: Sha256HexSchema,
});
export type BookingRequestView = z.infer<typeof BookingRequestViewSchema>;

/** `201`/`200` response body. */
export const BookingResponseSchema = z.strictObject({ booking_request: BookingRequestViewSchema, receipt_jws: z.string() });
export type BookingResponse = z.infer<typeof BookingResponseSchema>;
