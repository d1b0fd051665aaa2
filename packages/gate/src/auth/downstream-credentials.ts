/**
 * The port over the credentials the gateway holds for downstream servers, and its implementation on
 * the gate store's engine. Values arrive sealed (auth/vault.ts); this layer never sees them in clear.
 */
import type { Kysely } from 'kysely';
import type { GateDatabase, StoreEngine } from '../store/engine.js';
import type { CredentialKind, DownstreamAuthorizationTable, DownstreamCredentialsDatabase } from './credentials-schema.js';

export interface DownstreamCredentials {
  get(serverId: string, subject: string, kind: CredentialKind): Promise<string | undefined>;
  put(serverId: string, subject: string, kind: CredentialKind, sealed: string, now: number): Promise<void>;
  /** Forget one kind, or everything held for this user at this server. */
  forget(serverId: string, subject: string, kind?: CredentialKind): Promise<number>;
  /** Record an authorization in progress under its state's digest. */
  beginAuthorization(row: DownstreamAuthorizationTable): Promise<void>;
  /** Take (and delete) the authorization a callback's state names, if it has not expired: single use. */
  takeAuthorization(stateDigest: string, now: number): Promise<DownstreamAuthorizationTable | undefined>;
}

export class SqlDownstreamCredentials implements DownstreamCredentials {
  private readonly db: Kysely<GateDatabase & DownstreamCredentialsDatabase>;

  constructor(engine: StoreEngine) {
    this.db = engine.db.withTables<DownstreamCredentialsDatabase>();
  }

  async get(serverId: string, subject: string, kind: CredentialKind): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('gate_downstream_credential')
      .select('sealed')
      .where('server_id', '=', serverId)
      .where('subject', '=', subject)
      .where('kind', '=', kind)
      .executeTakeFirst();
    return row?.sealed;
  }

  async put(serverId: string, subject: string, kind: CredentialKind, sealed: string, now: number): Promise<void> {
    await this.db
      .insertInto('gate_downstream_credential')
      .values({ server_id: serverId, subject, kind, sealed, updated_at: now })
      .onConflict((oc) => oc.columns(['server_id', 'subject', 'kind']).doUpdateSet({ sealed, updated_at: now }))
      .execute();
  }

  async forget(serverId: string, subject: string, kind?: CredentialKind): Promise<number> {
    let q = this.db.deleteFrom('gate_downstream_credential').where('server_id', '=', serverId).where('subject', '=', subject);
    if (kind) q = q.where('kind', '=', kind);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async beginAuthorization(row: DownstreamAuthorizationTable): Promise<void> {
    await this.db.insertInto('gate_downstream_authorization').values(row).execute();
  }

  async takeAuthorization(stateDigest: string, now: number): Promise<DownstreamAuthorizationTable | undefined> {
    // Delete-returning: two callbacks with one state cannot both take it.
    const row = await this.db
      .deleteFrom('gate_downstream_authorization')
      .where('state_digest', '=', stateDigest)
      .returningAll()
      .executeTakeFirst();
    return row && row.expires_at > now ? row : undefined;
  }
}
