import { createTable } from '@vrpkit/sql';
import { type Kysely, type Migration, sql } from 'kysely';
import {
  BLOCKED_RANGE_COLUMNS,
  BOOKING_REQUEST_COLUMNS,
  NODE_CALENDAR_FEED_COLUMNS,
  SIGNING_KEY_COLUMNS,
  UCP_IDEMPOTENCY_COLUMNS,
  UCP_SESSION_COLUMNS,
} from './tables.js';

/**
 * Versioned migrations, in code (no file-system provider, so they ship inside the package
 * and run the same from src/ and dist/). Only the portable schema builder is used: the same
 * migrations run on SQLite and PostgreSQL. Never edit a released migration; add the next one.
 */
export const nodeMigrations: Readonly<Record<string, Migration>> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('node_info')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('canonical_domain', 'text', (c) => c.notNull())
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('property')
        .addColumn('property_id', 'text', (c) => c.primaryKey())
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('rate_plan')
        .addColumn('property_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('season_type', 'text', (c) => c.notNull())
        .addColumn('start_date', 'text')
        .addColumn('end_date', 'text')
        .addColumn('nightly_rate', 'integer', (c) => c.notNull())
        .addColumn('weekend_rate', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_plan_pk', ['property_id', 'seq'])
        .execute();
      await db.schema
        .createTable('stay_fee')
        .addColumn('property_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('amount', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('stay_fee_pk', ['property_id', 'seq'])
        .execute();
      await createTable(db, 'blocked_range', BLOCKED_RANGE_COLUMNS);
      await db.schema
        .createIndex('blocked_range_by_dates')
        .on('blocked_range')
        .columns(['property_id', 'start_date', 'end_date'])
        .execute();
      await db.schema.createIndex('blocked_range_by_feed').on('blocked_range').column('feed_name').execute();
      await createTable(db, 'calendar_feed', NODE_CALENDAR_FEED_COLUMNS);
      await createTable(db, 'signing_key', SIGNING_KEY_COLUMNS);
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['signing_key', 'calendar_feed', 'blocked_range', 'stay_fee', 'rate_plan', 'property', 'node_info']) {
        await db.schema.dropTable(t).execute();
      }
    },
  },
  /**
   * A store-wide revision, bumped in the same transaction as every write, so the offer path can
   * read one row per request and reuse what it loaded while nothing has changed (never stale).
   */
  '0002_store_revision': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('store_revision')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into store_revision (id, revision) values (1, 0)`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('store_revision').execute();
    },
  },
  /**
   * When a key starts signing (`vrp node keys rotate --publish-ahead`): a key can be published
   * before it signs. Keys from before this migration started signing when they were created.
   */
  '0003_key_activation': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('signing_key').addColumn('activates_at', 'text').execute();
      await sql`update signing_key set activates_at = created_at`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('signing_key').dropColumn('activates_at').execute();
    },
  },
  /**
   * Booking requests (the vrpkit booking-request extension): a hold is a row here plus a
   * `booking` blocked range with the same id, written in one transaction. Guest details live in
   * this table only. `booking_event` is the outbox the webhook sender drains, so a change made by
   * any process (a CLI confirm, a sweep in another worker) is announced once.
   */
  '0004_booking_request': {
    async up(db: Kysely<unknown>) {
      await createTable(db, 'booking_request', BOOKING_REQUEST_COLUMNS);
      await db.schema.createIndex('booking_request_by_status').on('booking_request').columns(['status', 'hold_expires_at']).execute();
      await db.schema
        .createTable('booking_event')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('booking_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('delivered_at', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('booking_event_undelivered').on('booking_event').columns(['delivered_at', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('booking_event').execute();
      await db.schema.dropTable('booking_request').execute();
    },
  },
  /**
   * UCP booking sessions: a session is a row here only; it blocks no night. The hold the guest's
   * confirmation makes is a `booking_request` (0004) whose id the session keeps.
   */
  '0005_ucp_session': {
    async up(db: Kysely<unknown>) {
      await createTable(db, 'ucp_session', UCP_SESSION_COLUMNS);
      await db.schema.createIndex('ucp_session_by_status').on('ucp_session').columns(['status', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('ucp_session').execute();
    },
  },
  /**
   * UCP sessions speak the Lodging booking capability (`dev.ucp.lodging.booking`): the party the
   * platform sends (`booker`, `guests[]` with their platform ids, occupancy, guest assignments) is
   * kept as sent, to be echoed unchanged. Guest data, like the buyer columns (no retention purge of
   * session rows exists yet).
   */
  '0006_ucp_session_party': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ucp_session').addColumn('party_json', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ucp_session').dropColumn('party_json').execute();
    },
  },
  /**
   * The UCP `Idempotency-Key`s of booking-session operations and their answers (REST binding, HTTP
   * Headers; Message Signatures, Replay Protection), each kept 48 hours: a repeated request answers
   * from here and writes nothing new. A cached Create or Update answer holds the party it echoed, so
   * rows expire and are removed on the next claim after their `expires_at`.
   */
  '0007_ucp_idempotency': {
    async up(db: Kysely<unknown>) {
      await createTable(db, 'ucp_idempotency', UCP_IDEMPOTENCY_COLUMNS);
      await db.schema.createIndex('ucp_idempotency_by_expiry').on('ucp_idempotency').column('expires_at').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('ucp_idempotency').execute();
    },
  },
  /**
   * The host's word to the guest (issue 35): the reason a hold was declined (also the canceled
   * session's message), and a mail cursor on the booking-event outbox, so the serving node mails
   * the guest (and the host, `--host-email`) each decision the host made, whichever process made it.
   * Events from before this migration are marked mailed: an upgrade mails no old decision.
   */
  '0008_booking_notice': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('booking_request').addColumn('decision_reason', 'text').execute();
      await db.schema.alterTable('ucp_session').addColumn('cancel_reason', 'text').execute();
      await db.schema.alterTable('booking_event').addColumn('mailed_at', 'text').execute();
      await db.schema
        .alterTable('booking_event')
        .addColumn('mail_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update booking_event set mailed_at = created_at`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('booking_event').dropColumn('mail_attempts').execute();
      await db.schema.alterTable('booking_event').dropColumn('mailed_at').execute();
      await db.schema.alterTable('ucp_session').dropColumn('cancel_reason').execute();
      await db.schema.alterTable('booking_request').dropColumn('decision_reason').execute();
    },
  },
};
