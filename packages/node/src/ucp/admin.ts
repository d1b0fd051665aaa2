/**
 * `vrp node bookings sessions`: the UCP booking sessions a node holds, by status, oldest first —
 * what a host console lists through the same read port (`UcpSessionReader`). The list carries no
 * one-time code digest; the buyer's contact is shown to the host only (never logged).
 */
import { type UcpSessionStatus, UcpSessionStatusSchema } from '@vrpkit/protocol';
import { type NodeStoreOptions, withNodeStore } from '../admin/store.js';
import { NodeError } from '../errors.js';
import type { UcpSessionReader } from './ports.js';

const STATUSES: readonly UcpSessionStatus[] = UcpSessionStatusSchema.options;

export function listUcpSessions(o: NodeStoreOptions & { status?: string }): ReturnType<UcpSessionReader['ucpSessions']> {
  const status = o.status;
  if (status !== undefined && !STATUSES.includes(status as UcpSessionStatus))
    throw new NodeError('invalid_booking_status', { statuses: STATUSES.join(', ') });
  return withNodeStore(o, (store) => store.ucpSessions(status as UcpSessionStatus | undefined));
}
