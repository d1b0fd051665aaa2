/**
 * `vrp node bookings sessions`: the UCP booking sessions a node holds, by status, oldest first —
 * what a host console lists through the same read port (`UcpSessionReader`). The list carries no
 * one-time code digest; the buyer's contact is shown to the host only (never logged).
 */
import { UcpSessionStatusSchema } from '@vrpkit/protocol';
import { type NodeStoreOptions, withNodeStore } from '../admin/store.js';
import { NodeError } from '../errors.js';
import type { UcpSessionReader, UcpSessionRecord } from './ports.js';

type Stored = UcpSessionRecord['status'];
/** The statuses a session is stored in (`complete_in_progress` never is: completion is one statement). */
const STATUSES = UcpSessionStatusSchema.options.filter((s): s is Stored => s !== 'complete_in_progress');

export function listUcpSessions(o: NodeStoreOptions & { status?: string }): ReturnType<UcpSessionReader['ucpSessions']> {
  const status = o.status;
  if (status !== undefined && !STATUSES.includes(status as Stored))
    throw new NodeError('invalid_booking_status', { statuses: STATUSES.join(', ') });
  return withNodeStore(o, (store) => store.ucpSessions(status as Stored | undefined));
}
