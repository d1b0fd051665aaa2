/**
 * The operator console's passkeys and one-time enrollment links in the platform database (the node
 * console's `ConsolePasskeyStore` port, so the same passkey ceremonies run over it): each passkey
 * with the role it was enrolled for, each link kept as the SHA-256 of its token with its role and
 * expiry, never the token. Every serving process (and `vrp platform console enroll`, another
 * process) shares them through the database.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type ConsolePasskey, ENROLLMENT_TTL_MS, NodeError, type RemovablePasskeys } from '@vrpkit/node';
import type { Kysely } from 'kysely';
import { PlatformError } from '../errors.js';
import type { ConsolePasskeyTable, ConsoleRole, PlatformDatabase } from '../store/schema.js';

export const CONSOLE_ROLES: readonly ConsoleRole[] = ['operator', 'support'];

const iso = (ms: number) => new Date(ms).toISOString();
const tokenDigest = (token: string) => createHash('sha256').update(token).digest('hex');

function passkeyOf(row: ConsolePasskeyTable): ConsolePasskey & { role: ConsoleRole } {
  return {
    id: row.id,
    public_key: row.public_key,
    counter: Number(row.counter),
    transports: JSON.parse(row.transports) as string[],
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    role: row.role,
  };
}

export class PlatformConsoleCredentials implements RemovablePasskeys {
  constructor(private readonly db: Kysely<PlatformDatabase>) {}

  async passkeys(): Promise<(ConsolePasskey & { role: ConsoleRole })[]> {
    return (await this.db.selectFrom('platform_console_passkey').selectAll().orderBy('created_at').execute()).map(passkeyOf);
  }

  async removePasskey(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('platform_console_passkey').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async passkey(id: string): Promise<(ConsolePasskey & { role: ConsoleRole }) | undefined> {
    const row = await this.db.selectFrom('platform_console_passkey').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? passkeyOf(row) : undefined;
  }

  /** A one-time enrollment link's token for `role` (returned once, kept only as its digest) and its expiry; expired links are dropped. */
  async createEnrollment(role: string, now: number): Promise<{ token: string; expiresAt: string }> {
    if (!CONSOLE_ROLES.includes(role as ConsoleRole)) throw new PlatformError('invalid_console_role');
    const token = randomBytes(32).toString('base64url');
    const expiresAt = iso(now + ENROLLMENT_TTL_MS);
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('platform_console_enrollment').where('expires_at', '<=', iso(now)).execute();
      await tx
        .insertInto('platform_console_enrollment')
        .values({ token_sha256: tokenDigest(token), role: role as ConsoleRole, expires_at: expiresAt })
        .execute();
    });
    return { token, expiresAt };
  }

  async isEnrollment(token: string, now: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('platform_console_enrollment')
      .select('role')
      .where('token_sha256', '=', tokenDigest(token))
      .where('expires_at', '>', iso(now))
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The link used up and the passkey kept with the link's role, in one transaction: a link enrolls one passkey. */
  async enrollPasskey(token: string, p: ConsolePasskey, now: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const link = await tx
        .deleteFrom('platform_console_enrollment')
        .where('token_sha256', '=', tokenDigest(token))
        .where('expires_at', '>', iso(now))
        .returning('role')
        .executeTakeFirst();
      if (!link) throw new NodeError('console_enrollment_invalid');
      await tx
        .insertInto('platform_console_passkey')
        .values({
          id: p.id,
          public_key: p.public_key,
          counter: p.counter,
          transports: JSON.stringify(p.transports),
          role: link.role,
          created_at: p.created_at,
          last_used_at: p.last_used_at,
        })
        .execute();
    });
  }

  async recordUse(id: string, counter: number, now: number): Promise<void> {
    await this.db
      .updateTable('platform_console_passkey')
      .set({ counter, last_used_at: iso(now) })
      .where('id', '=', id)
      .execute();
  }
}
