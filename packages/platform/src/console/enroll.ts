/**
 * `vrp platform console enroll --role operator|support`: a one-time link (15 minutes) that enrolls
 * a passkey for the operator console with that role. The token is printed once and kept only as
 * its digest (credentials.ts); the link is whole once the console has listened (its origin is in
 * the database), else the path to open on it.
 */
import type { PlatformStore } from '../tenants.js';
import { PlatformConsoleCredentials } from './credentials.js';

export interface OperatorConsoleEnrollment {
  link: string;
  complete: boolean;
  role: string;
  expires_at: string;
}

export async function enrollOperatorConsole(store: PlatformStore, role: string): Promise<OperatorConsoleEnrollment> {
  const { console_origin } = await store.info();
  const { token, expiresAt } = await new PlatformConsoleCredentials(store.db).createEnrollment(role, store.clock.now());
  const path = `/enroll?token=${token}`;
  return { link: console_origin ? `${console_origin}${path}` : path, complete: console_origin !== null, role, expires_at: expiresAt };
}
