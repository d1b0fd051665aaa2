/**
 * Stopping a server without dropping what it was asked (issue 36 defect 2). A rolling restart
 * behind a load balancer or `systemctl stop` during a booking POST sends SIGTERM while requests
 * are in flight on kept-alive connections; closing every connection at once reset them. A
 * drain stops accepting, finishes what was received (each connection is closed once its answer
 * is out), closes idle connections at once and, after the grace period, whatever is still open.
 * One drain for every listener: the node's, the platform's and the gate proxy's.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Default bound on a drain (`--shutdown-grace`), in seconds: above a booking POST's time, below a supervisor's kill timeout. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 10;

/** What a drain needs of an http or https server. */
export type DrainableServer = Pick<Server, 'close' | 'closeIdleConnections' | 'closeAllConnections' | 'prependListener'>;

export interface Drain {
  /** Stop accepting, let the requests in flight finish (at most `graceMs`), then close every connection; resolves once all are closed. */
  drain(graceMs: number): Promise<void>;
}

/** How often a drain closes the connections that became idle since (their answer is out). */
const DRAIN_POLL_MS = 25;

/** A connection as the http server keeps it: `_httpMessage` is the answer it is writing (Node's own field, set while a request is served). */
type ServedSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * The drain of `server`: call it before the server accepts. Serving pays nothing per request for
 * it (tracking every request's `close` cost ~7 µs a request, a fifth of a cached offer): the
 * drain keeps the open connections (one entry per connection, not per request) and relies on the
 * server's own bookkeeping otherwise. A connection carrying a request is not idle, so
 * `closeIdleConnections` spares it until its answer is out; polling that every few ms closes each
 * connection as its last answer leaves. Every answer not yet under way when the drain starts, and
 * every one begun after, carries `Connection: close`. A stream that never ends by itself (an SSE
 * notification stream) is ended by its owner before the drain.
 */
export function drainable(server: DrainableServer): Drain {
  const open = new Set<ServedSocket>();
  const lastOnConnection = (res: ServerResponse | null | undefined) => {
    if (res && !res.headersSent) res.setHeader('connection', 'close');
  };
  server.prependListener('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  // A TLS server hands the request its TLS socket, not the TCP one its 'connection' saw.
  server.prependListener('secureConnection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  let drained: Promise<void> | undefined;
  return {
    drain(graceMs) {
      drained ??= new Promise<void>((done) => {
        server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => lastOnConnection(res));
        for (const socket of open) lastOnConnection(socket._httpMessage);
        const idle = setInterval(() => server.closeIdleConnections(), DRAIN_POLL_MS);
        const late = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(late);
          done();
        });
        server.closeIdleConnections();
      });
      return drained;
    },
  };
}
