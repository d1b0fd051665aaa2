/**
 * Keeping a kept-alive TLS connection alive when a request arrives before the previous answer
 * has drained (issue 32: the Python MCP SDK's "Server disconnected without sending a response").
 *
 * Node's HTTP server hands a connection's handle to its parser ("consumed": the bytes go from
 * the handle to the parser without a JS `data` event). At each new request's headers it pauses
 * that parser while the socket still holds an answer not yet drained (`_http_server.js`
 * `parserOnIncoming`: `needDrain`, against a flood of pipelined requests), and stops the handle
 * reading. A TLS handle decrypts every record of a TCP read in one loop and cannot stop inside
 * it, so a record after the headers (the request's body, which httpx writes apart from its head)
 * reaches the paused parser; llhttp answers `HPE_PAUSED`, which the server treats as a parse
 * error and destroys the connection without a response. It needs only an answer above the
 * socket's 16 KiB high-water mark (an MCP offer call's ~19 KB, written from a `setImmediate`
 * signing turn, so its drain comes one loop turn later) and a client quick enough to send its
 * next request in between: about one Python run in five on a loaded machine, on the node and a
 * platform tenant (both TLS). Reproduced deterministically in packages/core/test/tls-parse.test.ts.
 *
 * A connection with a `data` listener is not consumed (Node unconsumes it as soon as one is
 * added), and a paused stream keeps what arrives in its buffer and gives it to the parser on
 * resume, so nothing reaches a paused parser. On plain TCP the consumed path is safe (libuv stops
 * between reads and one read is parsed whole before the pause), so only TLS servers change.
 */
import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';

const ignore = (): void => {};

/**
 * Make `server` (an https server; anything else is left as it is) parse each connection from
 * its stream rather than its handle. Call it after creating the server: the listener must come
 * after the HTTP layer's own `secureConnection` listener, which sets the connection up.
 */
export function parseTlsConnectionsAsStreams(server: HttpServer | TlsServer): void {
  if (!(server instanceof TlsServer)) return;
  // The HTTP layer wraps `socket.on`: adding a `data` listener unconsumes the connection; the
  // bytes still go to the parser through the HTTP layer's own `data` listener.
  server.on('secureConnection', (socket: Socket) => socket.on('data', ignore));
}
