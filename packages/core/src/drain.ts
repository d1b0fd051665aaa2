/**
 * Stopping a server without dropping what it was asked (issue 36 defect 2). A rolling restart
 * behind a load balancer or `systemctl stop` during a booking POST sends SIGTERM while requests
 * are in flight on kept-alive connections; closing every connection at once reset them. A
 * drain stops accepting, finishes what was received (each answer carries `Connection: close`,
 * so its connection ends after it), closes idle connections at once and, after the grace
 * period, whatever is still open. One drain for every listener: the node's, the platform's and
 * the gate proxy's.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Default bound on a drain (`--shutdown-grace`), in seconds: above a booking POST's time, below a supervisor's kill timeout. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 10;

/** What a drain needs of an http or https server. */
export type DrainableServer = Pick<Server, 'close' | 'closeIdleConnections' | 'closeAllConnections' | 'prependListener'>;

export interface Drain {
  /** Stop accepting, let the requests in flight finish (at most `graceMs`), then close every connection; resolves once all are closed. */
  drain(graceMs: number): Promise<void>;
}

/**
 * Track `server`'s requests from now on (call it before it serves), so `drain` knows which
 * connections carry a request. `waitsFor(req)` says whether a drain waits for a request's answer
 * (default: every request); a stream that never ends by itself (an SSE notification stream) is
 * closed by its owner instead.
 */
export function drainable(server: DrainableServer, waitsFor: (req: IncomingMessage) => boolean = () => true): Drain {
  let draining = false;
  const inFlight = new Set<ServerResponse>();
  // An answer whose head is not yet written ends its connection after it: nothing new is read there.
  const lastOnConnection = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  };
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!waitsFor(req)) return;
    inFlight.add(res);
    if (draining) lastOnConnection(res);
    res.once('close', () => {
      inFlight.delete(res);
      // An answer already under way when the drain began may have kept its connection alive: it is idle now.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  let drained: Promise<void> | undefined;
  return {
    drain(graceMs) {
      drained ??= new Promise<void>((done) => {
        draining = true;
        const late = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(late);
          done();
        });
        for (const res of inFlight) lastOnConnection(res);
        server.closeIdleConnections();
      });
      return drained;
    },
  };
}
