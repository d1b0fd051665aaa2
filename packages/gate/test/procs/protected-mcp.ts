/**
 * A downstream MCP server protected by the gateway's own resource server (auth/http.ts), for the
 * authorization tests: one tool, `whoami`, answering the token's subject. `reject` makes it answer
 * 401 `invalid_token` to the tokens in it (a token the authorization server revoked).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { authenticateRequest, protectedResourceMetadataResponse } from '../../src/auth/http.js';
import { type Principal, ResourceServer, type TokenValidation } from '../../src/auth/resource-server.js';

export interface ProtectedMcp {
  url: string;
  /** Access tokens to answer with 401 invalid_token. */
  reject: Set<string>;
  /** The bearer tokens seen, in order (the test checks which token a call carried). */
  seen: string[];
  close(): Promise<void>;
}

/** `validation`: how the downstream checks tokens (default: as JWTs; introspection sees a token revoked at the server). */
export async function startProtectedMcp(issuer: string, validation: TokenValidation = { kind: 'jwt' }): Promise<ProtectedMcp> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const rs = new ResourceServer({ resource: url, issuer, validation, scopesSupported: ['tools:call'] });
  const reject = new Set<string>();
  const seen: string[] = [];
  const mcp = createMcpHandler(({ authInfo }) => {
    const principal = authInfo?.extra?.principal as Principal | undefined;
    const s = new McpServer({ name: 'protected', version: '1.0.0' });
    s.registerTool('whoami', { description: 'the caller' }, () => ({ content: [{ type: 'text', text: principal?.subject ?? '?' }] }));
    return s;
  });
  server.on(
    'request',
    getRequestListener(async (request) => {
      const metadata = protectedResourceMetadataResponse(rs, request);
      if (metadata) return metadata;
      const token = request.headers.get('authorization')?.replace(/^bearer +/i, '') ?? '';
      if (token) seen.push(token);
      if (reject.has(token)) {
        return new Response(null, { status: 401, headers: { 'www-authenticate': rs.challenge('invalid_token') } });
      }
      const auth = await authenticateRequest(rs, request);
      if (!auth.ok) return auth.response;
      return mcp.fetch(request, { authInfo: auth.authInfo });
    }),
  );
  return {
    url,
    reject,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
