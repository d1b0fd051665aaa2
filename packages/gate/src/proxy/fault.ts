/**
 * Named points where `VRP_GATE_PROXY_FAULT` makes the proxy SIGKILL itself (crash tests only):
 * `after-consume` — the act's authority is consumed and journaled, the downstream not yet called;
 * `after-downstream-call` — the downstream answered, its result not yet journaled.
 */
export type ProxyFaultPoint = 'after-consume' | 'after-downstream-call';

/** Fault injection (`VRP_GATE_PROXY_FAULT`): die as a power cut would, with no cleanup and no reply. */
export function sigkillSelf(): never {
  process.kill(process.pid, 'SIGKILL');
  // Genuinely impossible: SIGKILL cannot be caught, so this line never runs; `never` needs a throw.
  throw new Error('unreachable: SIGKILL was sent');
}
