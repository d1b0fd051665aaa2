/**
 * What every operator console page shares: the options the console was built with and the
 * signed-in request's operator (its role and how the audit trail names it), set by app.ts after
 * the session check.
 */
import type { ConsoleActionEntry } from '@vrpkit/node';
import type { Context } from 'hono';
import type { MasterKey } from '../master-key.js';
import type { ConsoleRole } from '../store/schema.js';
import type { PlatformStore } from '../tenants.js';
import type { PlatformConsoleCredentials } from './credentials.js';
import type { FleetHistory } from './fleet.js';

export interface OperatorConsoleOptions {
  store: PlatformStore;
  /** The master key new tenant keys are sealed under (a rotation makes one). */
  master: MasterKey;
  credentials: PlatformConsoleCredentials;
  fleet: FleetHistory;
  scheme: 'http' | 'https';
  hosts: Set<string>;
  /** The platform's own domain, or a generic name without one: shown on the sign-in page. */
  subject: string;
  now: () => number;
  onError?: (e: unknown) => void;
  onAction?: (entry: ConsoleActionEntry) => void;
}

/** What a signed-in request of this console knows of its person. */
export interface Operator {
  role: ConsoleRole;
  /** How the audit trail names them: `console:ROLE:` and a digest of the passkey id (never the id itself). */
  actor: string;
}

const OPERATOR_KEY = 'vrp_platform_operator' as never;

export function setOperator(c: Context, operator: Operator): void {
  c.set(OPERATOR_KEY, operator as never);
}

export function operatorOf(c: Context): Operator {
  return c.get(OPERATOR_KEY) as Operator;
}
