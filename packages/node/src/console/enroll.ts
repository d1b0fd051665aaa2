/**
 * `vrp node console enroll`: a one-time link that enrolls a passkey for the host console. The
 * token is printed once and kept only as its digest (passkeys.ts); the link is whole when the
 * console has listened before (listen.ts records its origin), else the path to open on it.
 */
import { systemClock } from '@vrpkit/core';
import type { NodeStoreOptions } from '../admin/store.js';
import { readNodeConfig } from '../datadir.js';
import { lastConsoleOrigin } from './listen.js';
import { ConsoleCredentials } from './passkeys.js';

export interface ConsoleEnrollment {
  /** `/enroll?token=…`, on the console's origin when it is known. */
  link: string;
  /** Whether `link` holds the console's origin (else it is a path to open on the console). */
  complete: boolean;
  expires_at: string;
}

export function enrollConsole(o: Pick<NodeStoreOptions, 'dataDir' | 'clock'>): ConsoleEnrollment {
  // The data directory must be a node's: a typo must not create a console folder somewhere else.
  readNodeConfig(o.dataDir);
  const { token, expiresAt } = new ConsoleCredentials(o.dataDir).createEnrollment((o.clock ?? systemClock).now());
  const path = `/enroll?token=${token}`;
  const origin = lastConsoleOrigin(o.dataDir);
  return { link: origin ? `${origin}${path}` : path, complete: origin !== null, expires_at: expiresAt };
}
