/**
 * `vrp gate proxy --downstream-oauth user|service|exchange`: an `--upstream` that requires OAuth,
 * reached with credentials the gateway holds (docs/gateway.md, "Downstream servers that require
 * OAuth"). Secrets come from the environment only (a flag shows in `ps`); the credentials are
 * sealed in the gate store under the master key (`--master-key-file` or VRPKIT_MASTER_KEY, the
 * platform's format: `vrp platform master-key generate` writes one).
 */
import type { DownstreamOAuthMode, DownstreamSpec } from '@vrpkit/gate/proxy';
import { loadMasterKey } from '@vrpkit/platform';
import { type Command, Option } from 'commander';
import { usage } from '../../errors.js';
import { parseUsage } from './options.js';

/** The environment variable holding the client secret of `--downstream-client-id` (confidential clients). */
export const DOWNSTREAM_CLIENT_SECRET_ENV = 'VRPKIT_DOWNSTREAM_CLIENT_SECRET';

export interface DownstreamOAuthFlags {
  downstreamOauth?: DownstreamOAuthMode;
  downstreamClientId?: string;
  downstreamClientMetadataUrl?: string;
  downstreamGrant?: 'authorization_code' | 'client_credentials';
  downstreamRedirectUrl?: string;
  masterKeyFile?: string;
}

export function downstreamOAuthFlags(c: Command): Command {
  return c
    .addOption(
      new Option(
        '--downstream-oauth <mode>',
        'the --upstream requires OAuth: user = each user authorizes once and is served with their own token (team mode); exchange = RFC 8693 from the user’s token, else as user; service = one credential of the gateway',
      ).choices(['user', 'service', 'exchange']),
    )
    .option(
      '--downstream-client-id <id>',
      `the gateway's pre-registered client at the upstream's authorization server (secret from ${DOWNSTREAM_CLIENT_SECRET_ENV}); without it, CIMD or dynamic registration`,
    )
    .option(
      '--downstream-client-metadata-url <url>',
      "this gateway's client ID metadata document (https), where the authorization server accepts CIMD",
    )
    .addOption(
      new Option(
        '--downstream-grant <grant>',
        'service mode: client_credentials asks for the gateway’s token with no person (needs --downstream-client-id and its secret); default: a URL printed once',
      ).choices(['authorization_code', 'client_credentials']),
    )
    .option(
      '--downstream-redirect-url <url>',
      "the callback URL registered with the authorization server (default: the listener's /oauth/callback)",
    )
    .option('--master-key-file <file>', 'file holding the 256-bit master key that seals the held credentials (default: VRPKIT_MASTER_KEY)');
}

/** The flags checked (a bad combination is a usage error) and the master key read, before anything starts; the store is added by the caller. */
export async function downstreamOAuthSettings(
  o: DownstreamOAuthFlags,
  downstream: DownstreamSpec,
  at: { teamMode: boolean; listen: boolean },
) {
  const mode = o.downstreamOauth;
  if (!mode) {
    if (o.downstreamClientId || o.downstreamClientMetadataUrl || o.downstreamGrant || o.downstreamRedirectUrl || o.masterKeyFile)
      throw usage('the --downstream-* options and --master-key-file need --downstream-oauth');
    return undefined;
  }
  if (downstream.kind !== 'http') throw usage('--downstream-oauth needs --upstream (an HTTP MCP server)');
  if (Object.keys(downstream.headers).some((h) => h.toLowerCase() === 'authorization'))
    throw usage('--downstream-oauth sends its own Authorization header: drop it from --upstream-header');
  const secret = process.env[DOWNSTREAM_CLIENT_SECRET_ENV] || undefined;
  if (secret && !o.downstreamClientId) throw usage(`${DOWNSTREAM_CLIENT_SECRET_ENV} is set but --downstream-client-id is not`);
  if (o.downstreamGrant && mode !== 'service') throw usage('--downstream-grant is for --downstream-oauth service');
  if (o.downstreamGrant === 'client_credentials' && !secret)
    throw usage(`--downstream-grant client_credentials needs --downstream-client-id and ${DOWNSTREAM_CLIENT_SECRET_ENV}`);
  if (mode === 'exchange' && !o.downstreamClientId)
    throw usage('--downstream-oauth exchange needs --downstream-client-id (the exchange is a client’s)');
  if (mode !== 'service' && !at.teamMode)
    throw usage(`--downstream-oauth ${mode} holds a credential per user: it needs team mode (--auth-issuer)`);
  if (o.downstreamGrant !== 'client_credentials' && !at.listen && !o.downstreamRedirectUrl)
    throw usage('--downstream-oauth needs --listen: its callback (/oauth/callback) is served there');
  const url = (v: string) => parseUsage(() => new URL(v).toString());
  const { CredentialVault } = await import('@vrpkit/gate/proxy');
  return {
    mode,
    vault: CredentialVault.fromMasterKey(loadMasterKey(o.masterKeyFile).bytes),
    ...(o.downstreamClientId ? { client: { client_id: o.downstreamClientId, ...(secret ? { client_secret: secret } : {}) } } : {}),
    ...(o.downstreamClientMetadataUrl ? { clientMetadataUrl: url(o.downstreamClientMetadataUrl) } : {}),
    ...(o.downstreamGrant ? { grant: o.downstreamGrant } : {}),
    ...(o.downstreamRedirectUrl ? { redirectUrl: url(o.downstreamRedirectUrl) } : {}),
  };
}
