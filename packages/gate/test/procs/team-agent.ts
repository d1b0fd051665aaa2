/**
 * A team user's agent for the gateway tests: the official SDK v2 client on 2026-07-28 (no
 * elicitation declared), with an access token the test's `oidc-provider` issued to the user's
 * client for the gateway's resource.
 */
import { createServer } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TestAuthorizationServer, TestClient } from '@vrpkit/testkit/oidc';

export async function teamAgent(as: TestAuthorizationServer, user: TestClient, resource: string): Promise<Client> {
  return agentWithToken(user.client_id, await as.clientCredentialsToken(user, resource), resource);
}

/** The agent named `name`, presenting `token` at the gateway's `resource`. */
export async function agentWithToken(name: string, token: string, resource: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(resource), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** A free loopback port: the resource (and so every token's audience) is the listener's URL, known before it starts. */
export async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
