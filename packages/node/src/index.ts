/**
 * `@vrpkit/node`: the public API of a VRP node, grouped by the rule each name serves. Every name
 * here is used by the CLI, the test kit, another package's tests, the examples or the benchmarks,
 * or is what a library user needs to run a node without the CLI; the store, date, pricing and
 * key-ring internals stay inside the package. One name per line, so a new export is one line in
 * its group.
 */

export { A2A_JSONRPC_PATH } from '@vrpkit/protocol';
// Automatic HTTPS (ACME, RFC 8555) for `vrp node serve --acme`.
export type { AcmeOptions, AcmeStatus } from './acme.js';
// Backups: an encrypted, consistent snapshot of the store and the keys.
export {
  BACKUP_PASSPHRASE_ENV,
  type BackupNodeOptions,
  type BackupNodeResult,
  backupNode,
  type RestoreNodeOptions,
  type RestoreNodeResult,
  restoreNode,
} from './admin/backup.js';
export {
  addCalendarBlock,
  addCalendarFeed,
  assertFeedName,
  listCalendar,
  removeCalendarBlock,
  removeCalendarFeed,
  syncCalendar,
} from './admin/calendar.js';
export {
  assertCanonicalDomain,
  assertUrlOnDomain,
  type InitNodeOptions,
  type InitNodeResult,
  initNode,
} from './admin/init.js';
// Core VRP v0.1 §3 keys and JWKS: rotation (§3.1), revocation, the key list.
export {
  type KeyListing,
  listKeys,
  MAX_PUBLISH_AHEAD_SECONDS,
  revokeKey,
  rotateKey,
} from './admin/keys.js';
export { updateProperty } from './admin/property.js';
export {
  type NodeStoreOptions,
  withNodeStore,
} from './admin/store.js';
// The booking desk (vrpkit, beyond Core VRP v0.1 §5.1): the holds confirmed UCP sessions make,
// its ports, the hold upkeep and the webhook.
export { decideBooking, declineReason, listBookings, MAX_DECLINE_REASON_CHARS, showBooking } from './booking/admin.js';
export {
  type BookingAnswer,
  type BookingDesk,
  type BookingDeskOptions,
  type BookingLogEntry,
  type BookingRefusal,
  createBookingDesk,
  DEFAULT_HOLD_HOURS,
  MAX_HOLD_HOURS,
} from './booking/desk.js';
export { guestNotice, hostNotice, MAX_NOTICE_ATTEMPTS, NOTICE_WINDOW_MS } from './booking/notice.js';
export { checkOwnOffer, type OfferCheck } from './booking/offer-check.js';
export {
  type BookingEvent,
  type BookingOffers,
  type BookingOutbox,
  type BookingRequestRecord,
  type BookingStore,
  type HoldOutcome,
  type HoldSession,
  holdRange,
  type LiveQuote,
  type NewHold,
} from './booking/ports.js';
export { DEFAULT_BOOKING_HOLDS_PER_DAY, DEFAULT_BOOKING_RATE_LIMIT } from './booking/rate-limit.js';
export { bookingView, signBookingReceipt } from './booking/receipt.js';
export {
  assertGuestDataDays,
  type BookingUpkeep,
  type BookingUpkeepOptions,
  type BookingWebhook,
  type BookingWebhookEvent,
  DEFAULT_BOOKING_SWEEP_INTERVAL_MS,
  DEFAULT_GUEST_DATA_DAYS,
  MAX_WEBHOOK_ATTEMPTS,
  retentionCutoff,
  startBookingUpkeep,
} from './booking/upkeep.js';
export {
  checkWorkers,
  forkServeWorkers,
  isServeWorker,
  MAX_SERVE_WORKERS,
  runServeWorker,
  type ServedCluster,
  type ServeWorkers,
  serveNodeCluster,
} from './cluster.js';
// The console shell the platform's operator console is built on (issue 35 item 3): passkey sign-in
// through a store port, sessions, forms with per-form tokens, the page frame, its listener, charts.
export { chartNumbers } from './console/activity-page.js';
export { type ConsoleShellOptions, createConsoleShell } from './console/app.js';
export { type ChartRow, renderChart } from './console/charts.js';
export type { ConsoleActionEntry } from './console/context.js';
export { type Change, mountChange, pageContext, readForm } from './console/context.js';
// The host console (issue 35): passkey sign-in, inbox, calendar, keys and health, activity.
export {
  type ConsoleEnrollment,
  enrollConsole,
} from './console/enroll.js';
export { age as consoleAge } from './console/keys.js';
export { type ConsoleListenOptions, consoleScheme } from './console/listen.js';
export { type ConsoleFrame, confirmPage, formFields, messagePage, type PageContext, page, scrollable, when } from './console/pages.js';
export { type ConsolePasskey, type ConsolePasskeyStore, ENROLLMENT_TTL_MS } from './console/passkeys.js';
export {
  type ListedPasskey,
  listConsolePasskeys,
  mountPasskeys,
  passkeyLabel,
  type RemovablePasskeys,
  removeConsolePasskey,
  removeHostConsolePasskey,
} from './console/passkeys-page.js';
export { type ConsoleListenerParts, listenConsole, type ServedConsole } from './console/serve.js';
export type { ConsoleSession } from './console/sessions.js';
// Node administration: the data directory, its store, the property and the calendar.
export {
  DATABASE_URL_ENV,
  storeTargetFor,
} from './datadir.js';
export {
  addDays,
  localDate,
} from './dates.js';
export { dnsNamePattern } from './dns-name.js';
// Errors: data with stable codes.
export {
  InvalidPropertyError,
  NODE_CODES,
  type NodeCode,
  NodeError,
  OfferRequestError,
} from './errors.js';
// Operations: health and readiness (`/healthz`, `/readyz`).
export {
  type FeedReadiness,
  HEALTHZ_PATH,
  READYZ_PATH,
  type ReadinessCheck,
  type ReadinessReport,
  readinessProbe,
} from './health.js';
export {
  createNodeApp,
  type NodeAppOptions,
  type PublisherFor,
  type RequestLogEntry,
  type UcpSessionsFor,
} from './http/app.js';
// Node Tool Binding v0.1 §2–§5: the surfaces (mounted by `createNodeApp` from their registry); their paths are protocol's.
export { MAX_JSON_DEPTH } from './http/body.js';
export type { FormSpec } from './http/forms.js';
export { requestHostName } from './http/host-guard.js';
export { escapeHtml } from './http/html.js';
export { STORE_RETRY_AFTER_SECONDS, storeUnavailableResponse } from './http/json.js';
// iCal import (one feed's sync), shared with the platform's sync workers.
export {
  assertFeedUrl,
  type FeedFetchOptions,
  type FeedRecorder,
  type FeedSyncResult,
  feedUrlForMessages,
  syncFeed,
} from './ical.js';
export { isPublished, jwksAt, type KeyState, keyStateAt, type PrivateKeySource, signingKeyAt } from './keys.js';
export type { SignedOffer } from './offer.js';
export {
  createOfferCache,
  DEFAULT_OFFER_CACHE_MAX_AGE_SECONDS,
  DEFAULT_OFFER_CACHE_MAX_BYTES,
  MAX_OFFER_CACHE_MAX_AGE_SECONDS,
  OfferCache,
} from './offer-cache.js';
// The property a node publishes (validated before it is stored or served).
export {
  currencyMinorDigits,
  MAX_PROPERTY_FILE_BYTES,
  type PropertyDescription,
  parsePropertyDocument,
  propertyDocument,
  readPropertyFile,
  sampleProperty,
  validatePropertyDescription,
} from './property.js';
// MCP Composition Profile, as a receipt attestation: the node's receipt for one tools/call.
export {
  type IssueMcpReceiptInput,
  issueMcpReceipt,
} from './receipt.js';
// Serving: one process or a cluster of workers, over https with a dev CA or real certificates.
export {
  capConnectionsPerClient,
  checkConnectionCap,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  listenWithLimits,
  SERVER_LIMITS,
  type ServedNode,
  type ServeNodeOptions,
  serveNode,
  shutdownGraceMs,
} from './serve.js';
// Core VRP v0.1 §2 discovery, §4 request, §5–§7 offers: one offer service behind every surface.
export {
  type CalendarDay,
  createOfferService,
  type NodePublisher,
  type OfferOptions,
  type OfferOutcome,
  type OfferService,
  type OfferServiceOptions,
  offerFor,
  type PropertyView,
  type SnapshotSource,
} from './service/index.js';
export { REVISION_RECHECK_MS, type StoreTarget } from './store/db.js';
// The UCP Idempotency-Key rows over a table of the node's columns (a platform's tenants keep theirs so).
export { idempotencyRows, type RowScope } from './store/idempotency-rows.js';
export type {
  BlockedRangeTable,
  BlockKind,
  BookingRequestTable,
  KeyStatus,
  SigningKeyTable,
  UcpIdempotencyTable,
  UcpSessionTable,
} from './store/schema.js';
export {
  type BlockedRange,
  type CalendarFeed,
  NodeStore,
  type SigningKeyRecord,
  type StoreSnapshot,
} from './store/store.js';
// The tables a platform holds per tenant, defined once (the platform's migrations add `domain`).
export {
  BLOCKED_RANGE_COLUMNS,
  BOOKING_REQUEST_COLUMNS,
  CALENDAR_FEED_COLUMNS,
  SIGNING_KEY_COLUMNS,
  UCP_IDEMPOTENCY_COLUMNS,
  UCP_SESSION_COLUMNS,
  UCP_SESSION_PARTY_COLUMN,
} from './store/tables.js';
export { NODE_LIST_CACHE_HINT, readMcpBody, toolCallArguments } from './surfaces/mcp/index.js';
export { NODE_SURFACES } from './surfaces/registry.js';
// Background calendar sync (`vrp node serve --sync-interval`).
export {
  type CalendarSync,
  type CalendarSyncOptions,
  DEFAULT_SYNC_INTERVAL_MS,
  nextSyncDelayMs,
  startCalendarSync,
  startNodeCalendarSync,
} from './sync-loop.js';
export {
  createDevCa,
  createDevIssuer,
  ensureDevCa,
  issueServerCertificate,
  type PemKeyPair,
} from './tls.js';
export { cancelSessionOfDeclinedHold, listInbox, listUcpSessions } from './ucp/admin.js';
// UCP booking sessions (UCP Checkout with payment terms; the stay under `dev.vrpkit.lodging`):
// the sessions, the guest's confirmation, the mail transport, the profile and the ports.
export { CODE_TTL_MS, type ConfirmOutcome, type GuestConfirmation, guestConfirmation, MAX_CODE_ATTEMPTS } from './ucp/confirm.js';
export { confirmOnGuestPage, type DevMailbox, mailedCodeOf, type ReceivedMail, startDevMailbox } from './ucp/dev-guest.js';
export { type UcpBookingSessions, ucpBookingSessions } from './ucp/index.js';
export { type SmtpMailerOptions, smtpMailer } from './ucp/mail.js';
export {
  type ConfirmationMail,
  type GuestMailer,
  type NewUcpSession,
  newSessionRow,
  type UcpIdempotencyRecord,
  type UcpIdempotencyStore,
  type UcpSessionChange,
  type UcpSessionReader,
  type UcpSessionRecord,
  type UcpSessionStore,
  type UcpSettle,
} from './ucp/ports.js';
export { UCP_LODGING_SCHEMA_PATH, ucpBusinessProfile } from './ucp/profile.js';
export { DEFAULT_SESSION_HOURS, type UcpAnswer, type UcpHolds, UcpSessions, type UcpSessionsOptions } from './ucp/sessions.js';
