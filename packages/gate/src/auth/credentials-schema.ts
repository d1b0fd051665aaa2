/**
 * The credentials the gateway holds for downstream MCP servers that require OAuth (issue 33 item 4):
 * per downstream server and per user (or `*` for a service credential), each value sealed with the
 * gateway's master key (auth/vault.ts) before it reaches this table — tokens, the registered client,
 * a PKCE verifier while an authorization is under way. The table never holds a token in clear.
 */
import type { GateMigration } from '../store/migration.js';

/** What one row holds (sealed): the token set, the client registration, or an authorization in progress. */
export type CredentialKind = 'tokens' | 'client' | 'authorization';

export interface DownstreamCredentialTable {
  /** The downstream server's identity (its MCP endpoint URL). */
  server_id: string;
  /** The user the credential acts for (the token subject at the listener), or `*` for the gateway's own. */
  subject: string;
  kind: CredentialKind;
  /** A compact JWE (dir, A256GCM) bound to server, subject and kind. */
  sealed: string;
  updated_at: number;
}

/** Authorizations in progress by their OAuth `state` (the callback names only the state). */
export interface DownstreamAuthorizationTable {
  /** SHA-256 of the `state` value sent to the authorization server (the state itself is not stored). */
  state_digest: string;
  server_id: string;
  subject: string;
  expires_at: number;
}

// Type aliases (not interfaces) so Kysely's `withTables` accepts them.
export type DownstreamCredentialsDatabase = {
  gate_downstream_credential: DownstreamCredentialTable;
  gate_downstream_authorization: DownstreamAuthorizationTable;
};

export const DOWNSTREAM_CREDENTIALS_MIGRATION: GateMigration = {
  name: '0013_downstream_credentials',
  // `ifNotExists`: tests rewind a store to an older migration by deleting later rows of the
  // migration table; a table of its own that has no data to rebuild is simply kept.
  async up(db) {
    await db.schema
      .createTable('gate_downstream_credential')
      .ifNotExists()
      .addColumn('server_id', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('sealed', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('gate_downstream_credential_pk', ['server_id', 'subject', 'kind'])
      .execute();
    await db.schema
      .createTable('gate_downstream_authorization')
      .ifNotExists()
      .addColumn('state_digest', 'text', (c) => c.primaryKey())
      .addColumn('server_id', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
