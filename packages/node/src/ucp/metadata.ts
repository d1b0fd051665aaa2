/**
 * The request metadata of the two Booking bindings, checked before any operation runs:
 * - REST (rest.openapi.json `components.parameters`; rest.md HTTP Headers): `UCP-Agent` on every
 *   operation, an RFC 8941 Dictionary (parsed by `structured-headers`, never by hand) whose `profile`
 *   member is a String with the platform's profile URL; `Request-Id` on every operation, a UUID,
 *   echoed on the answer; `Idempotency-Key` on Create, Update, Complete and Cancel, a UUID.
 * - MCP (mcp.openrpc.json `components.schemas.meta`): `meta["ucp-agent"].profile` on every tool;
 *   `meta["idempotency-key"]`, a UUID, required by Complete and Cancel and honoured on Create and Update.
 * The profile URL must be an absolute https URL. The node does not fetch it (Overview, Negotiation:
 * capability intersection is not performed; the node answers with the capabilities it serves).
 */
import { isRecord } from '@vrpkit/core';
import type { UcpSessionCode } from '@vrpkit/protocol';
import { parseDictionary } from 'structured-headers';
import * as z from 'zod';
import type { UcpChangeOperation } from './idempotency.js';

const UUID = z.uuid();

/** A metadata refusal: its stable code and the words for it (never the value sent). */
export interface MetadataRefusal {
  code: Extract<UcpSessionCode, 'invalid_profile_url' | 'invalid_request_id' | 'invalid_idempotency_key'>;
  content: string;
}

export type Metadata<T> = { ok: true; value: T } | { ok: false; refusal: MetadataRefusal };

const refused = (code: MetadataRefusal['code'], content: string): { ok: false; refusal: MetadataRefusal } => ({
  ok: false,
  refusal: { code, content },
});

/** An absolute https URL, as a platform's profile must be. */
function isProfileUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.safeParse(value).success;

/** `UCP-Agent: profile="https://…"` (Overview, Platform Advertisement on Request: Dictionary Structured Field syntax). */
export function ucpAgentHeader(header: string | undefined): Metadata<string> {
  const bad = refused(
    'invalid_profile_url',
    'UCP-Agent must be a structured Dictionary with profile="https://…" (the platform’s profile URL)',
  );
  if (header === undefined) return bad;
  let dictionary: ReturnType<typeof parseDictionary>;
  try {
    dictionary = parseDictionary(header);
  } catch {
    return bad;
  }
  const profile = dictionary.get('profile')?.[0];
  return typeof profile === 'string' && isProfileUrl(profile) ? { ok: true, value: profile } : bad;
}

/** What the REST binding reads from the headers of one operation. */
export interface RestMetadata {
  profile: string;
  requestId: string;
  idempotencyKey?: string;
}

/** The headers the OpenAPI requires of `operation`, in its order: UCP-Agent, Request-Id, then Idempotency-Key (not on Get). */
export function restMetadata(header: (name: string) => string | undefined, operation: UcpChangeOperation | 'get'): Metadata<RestMetadata> {
  const agent = ucpAgentHeader(header('ucp-agent'));
  if (!agent.ok) return agent;
  const requestId = header('request-id');
  if (!isUuid(requestId)) return refused('invalid_request_id', 'Request-Id is required on every operation, a UUID');
  if (operation === 'get') return { ok: true, value: { profile: agent.value, requestId } };
  const key = header('idempotency-key');
  if (!isUuid(key)) return refused('invalid_idempotency_key', 'Idempotency-Key is required on this operation, a UUID');
  return { ok: true, value: { profile: agent.value, requestId, idempotencyKey: key } };
}

/** What the MCP binding reads from a tool's `meta` argument. */
export interface McpMetadata {
  profile: string;
  idempotencyKey?: string;
}

/** `meta` of a Booking tool call: `ucp-agent.profile` always; `idempotency-key` as mcp.openrpc.json asks of `operation`. */
export function mcpMetadata(meta: unknown, operation: UcpChangeOperation | 'get'): Metadata<McpMetadata> {
  const agent = isRecord(meta) ? meta['ucp-agent'] : undefined;
  const profile = isRecord(agent) ? agent.profile : undefined;
  if (typeof profile !== 'string' || !isProfileUrl(profile))
    return refused('invalid_profile_url', 'meta["ucp-agent"].profile is required: the platform’s profile URL, https');
  const key = isRecord(meta) ? meta['idempotency-key'] : undefined;
  const required = operation === 'complete' || operation === 'cancel';
  if (operation === 'get' || (key === undefined && !required)) return { ok: true, value: { profile } };
  if (!isUuid(key))
    return refused('invalid_idempotency_key', `meta["idempotency-key"] ${required ? 'is required on this tool, ' : 'must be '}a UUID`);
  return { ok: true, value: { profile, idempotencyKey: key } };
}
