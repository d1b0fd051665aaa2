import { VrpError } from '@vrpkit/core';

/**
 * Why a network read failed. Every one of these is an unknown for the facts that depended on
 * the read (Core VRP v0.1 §9): never a negative, never a pass.
 */
export type NetworkErrorCode =
  | 'insecure_scheme'
  | 'redirect_off_domain'
  | 'too_many_redirects'
  | 'response_too_large'
  | 'timeout'
  | 'connect_timeout'
  | 'dns_failure'
  | 'tls_failure'
  | 'network_error';

/** A network read the hardened fetch refused or could not complete. */
export class NetworkError extends VrpError {
  declare readonly code: NetworkErrorCode;
  constructor(code: NetworkErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(code, message, details, options);
  }
}

/** Invalid options or arguments passed to an agent API (a programmer or usage error). */
export class AgentUsageError extends VrpError {}
