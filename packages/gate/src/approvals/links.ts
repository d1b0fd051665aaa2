/**
 * Approval links: the URL a URL-mode elicitation sends a person to (MCP 2026-07-28,
 * client/elicitation, URL mode; issue 32 item 4). A link opens the approvals page at exactly one
 * escalated act and is
 * - single-use: a decision made through it spends it, in one conditional UPDATE; opening it
 *   spends nothing (a client's link preview or a reload does not burn it);
 * - scoped: it decides only its act's id and binding digest, never another act;
 * - short-lived: ten minutes by default, never past its escalation's expiry;
 * - no credential: a random token whose digest alone is stored; the page still asks for the
 *   approver's session (Safe URL Handling: "MUST NOT provide a URL which is pre-authenticated").
 */
import { randomBytes } from 'node:crypto';
import { sha256Base64url } from '@vrpkit/core';
import type { Kysely } from 'kysely';
import type { GateDatabase, StoreEngine } from '../store/engine.js';
import type { ApprovalLinkDatabase, ApprovalLinkTable } from './link-schema.js';

export type ApprovalLinkRow = ApprovalLinkTable;

/** How long a link stays usable unless configured (`--approval-link-ttl`). */
export const DEFAULT_APPROVAL_LINK_TTL_MS = 10 * 60_000;

/** The act a link is scoped to. */
export interface LinkScope {
  candidate_act_id: string;
  binding_digest: string;
}

/** The approval links port (its table: approvals/link-schema.ts). */
export interface ApprovalLinks {
  /** Record a new link (its token's digest, scope and expiry). */
  issue(row: Omit<ApprovalLinkRow, 'used_at' | 'used_by'>): Promise<void>;
  get(linkDigest: string): Promise<ApprovalLinkRow | undefined>;
  /**
   * Spend a link for a decision on `scope`: only an unused, unexpired link of exactly that act and
   * binding is spent. Returns the spent row, or undefined when nothing was spent.
   */
  use(linkDigest: string, scope: LinkScope, by: string, now: number): Promise<ApprovalLinkRow | undefined>;
  /** Delete links expired more than `retentionMs` ago. Returns how many. */
  purge(now: number, retentionMs: number): Promise<number>;
}

/** The approval link queries over the store's own connection. */
export class SqlApprovalLinks implements ApprovalLinks {
  private readonly db: Kysely<GateDatabase & ApprovalLinkDatabase>;

  constructor(engine: StoreEngine) {
    this.db = engine.db.withTables<ApprovalLinkDatabase>();
  }

  async issue(row: Omit<ApprovalLinkRow, 'used_at' | 'used_by'>): Promise<void> {
    await this.db
      .insertInto('gate_approval_link')
      .values({ ...row, used_at: null, used_by: null })
      .execute();
  }

  async get(linkDigest: string): Promise<ApprovalLinkRow | undefined> {
    return await this.db.selectFrom('gate_approval_link').selectAll().where('link_digest', '=', linkDigest).executeTakeFirst();
  }

  async use(linkDigest: string, scope: LinkScope, by: string, now: number): Promise<ApprovalLinkRow | undefined> {
    // One conditional UPDATE: of two racing decisions through one link, the second finds it used
    // (PostgreSQL re-evaluates the WHERE after the first commits; SQLite serializes writers).
    return await this.db
      .updateTable('gate_approval_link')
      .set({ used_at: now, used_by: by })
      .where('link_digest', '=', linkDigest)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .where('candidate_act_id', '=', scope.candidate_act_id)
      .where('binding_digest', '=', scope.binding_digest)
      .returningAll()
      .executeTakeFirst();
  }

  async purge(now: number, retentionMs: number): Promise<number> {
    const r = await this.db
      .deleteFrom('gate_approval_link')
      .where('expires_at', '<=', now - retentionMs)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** A link's token: 32 random bytes, base64url (43 characters). */
const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** True when `s` has the shape of a link token (checked before it reaches a query or a redirect). */
export function isApprovalLinkToken(s: string): boolean {
  return LINK_TOKEN.test(s);
}

/** The digest a link is stored under. */
export function approvalLinkDigest(token: string): string {
  return sha256Base64url(token);
}

/** The page path a link opens: `/act/<token>` under the approvals page. */
export function approvalLinkPath(token: string): string {
  return `/act/${token}`;
}

/** The full URL of a link under the approvals page's URL (its path is kept: the page may sit under a prefix). */
export function approvalLinkUrl(pageUrl: string, token: string): string {
  return new URL(approvalLinkPath(token).slice(1), pageUrl.endsWith('/') ? pageUrl : `${pageUrl}/`).toString();
}

export interface IssuedApprovalLink {
  /** The random token: shown once in the URL, never stored. */
  token: string;
  expires_at: number;
}

/**
 * Make a link for an escalated act: a fresh token, valid for `ttlMs` but never past the
 * escalation's own expiry (an expired escalation can no longer be decided).
 */
export async function issueApprovalLink(
  links: ApprovalLinks,
  escalation: LinkScope & { expires_at: number },
  o: { now: number; ttlMs?: number },
): Promise<IssuedApprovalLink> {
  const token = randomBytes(32).toString('base64url');
  const expires_at = Math.min(o.now + (o.ttlMs ?? DEFAULT_APPROVAL_LINK_TTL_MS), escalation.expires_at);
  await links.issue({
    link_digest: approvalLinkDigest(token),
    candidate_act_id: escalation.candidate_act_id,
    binding_digest: escalation.binding_digest,
    issued_at: o.now,
    expires_at,
  });
  return { token, expires_at };
}

/** What a link opens: its act while usable, else why not (unknown covers a malformed token). */
export type ApprovalLinkState =
  | { state: 'open'; link: ApprovalLinkRow }
  | { state: 'used'; link: ApprovalLinkRow }
  | { state: 'expired'; link: ApprovalLinkRow }
  | { state: 'unknown' };

export async function readApprovalLink(links: ApprovalLinks, token: string, now: number): Promise<ApprovalLinkState> {
  if (!isApprovalLinkToken(token)) return { state: 'unknown' };
  const link = await links.get(approvalLinkDigest(token));
  if (!link) return { state: 'unknown' };
  if (link.used_at !== null) return { state: 'used', link };
  if (link.expires_at <= now) return { state: 'expired', link };
  return { state: 'open', link };
}
