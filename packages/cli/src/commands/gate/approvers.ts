/**
 * Known approvers on the approvals page (issue 33 item 3; docs/gateway.md "Approvers"): the sign-in
 * flags `vrp gate ui` and `vrp gate proxy --ui` share, and `vrp gate approvers enroll`, which prints
 * a one-time link that enrolls a passkey for one subject.
 */
import type { Clock } from '@vrpkit/core';
import type { ApproversConfig } from '@vrpkit/gate/ui';
import type { Command } from 'commander';
import { usage } from '../../errors.js';
import { printJson, run } from '../../io.js';
import { closing, type GateStoreOptions, openStore, parseDuration, parseUsage, storeOption } from './options.js';

/** The OpenID Connect client secret is read from here only (a flag would show in `ps`). */
export const APPROVER_OIDC_SECRET_ENV = 'VRPKIT_APPROVER_OIDC_SECRET';

export interface ApproverSignInOptions {
  approverOidcIssuer?: string;
  approverOidcClientId?: string;
  approverOidcScope?: string;
  approverPasskeys?: boolean;
  approvers?: string;
  approverClaim?: string;
}

/** `--approver-oidc-*`, `--approver-passkeys`, `--approvers`, `--approver-claim`. */
export function approverSignInOptions(c: Command): Command {
  return c
    .option(
      '--approver-oidc-issuer <url>',
      `approvers sign in with OpenID Connect at this issuer (code flow + PKCE; client secret, if any, from ${APPROVER_OIDC_SECRET_ENV}); no token is printed then`,
    )
    .option(
      '--approver-oidc-client-id <id>',
      "the approvals page's client id at the OpenID provider (redirect URI: <page>/signin/oidc/callback)",
    )
    .option('--approver-oidc-scope <scopes>', 'scopes asked for besides openid, space-separated (e.g. "groups" for --approver-claim)')
    .option(
      '--approver-passkeys',
      'approvers sign in with passkeys enrolled by `vrp gate approvers enroll` (open the page at http://localhost:PORT)',
    )
    .option('--approvers <subjects>', 'comma-separated subjects that hold the approver role (OIDC `sub`, or an enrolled passkey subject)')
    .option(
      '--approver-claim <name=value>',
      'ID-token claim that grants the approver role, e.g. groups=approvers (a string equal to, or an array holding, the value)',
    );
}

/** The approvers configuration the flags give, or undefined for the token mode; every value checked. */
export async function approversConfig(o: ApproverSignInOptions): Promise<ApproversConfig | undefined> {
  const [{ checkIssuerUrl }, { parseApproverClaim }] = await Promise.all([import('@vrpkit/gate/ui'), import('@vrpkit/gate')]);
  const oidc = o.approverOidcIssuer !== undefined || o.approverOidcClientId !== undefined || o.approverOidcScope !== undefined;
  if (!oidc && !o.approverPasskeys) {
    if (o.approvers !== undefined || o.approverClaim !== undefined)
      throw usage('--approvers and --approver-claim need --approver-oidc-issuer or --approver-passkeys');
    return undefined;
  }
  if (oidc && (!o.approverOidcIssuer || !o.approverOidcClientId))
    throw usage('--approver-oidc-issuer and --approver-oidc-client-id go together');
  const subjects = (o.approvers ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const claim = o.approverClaim === undefined ? undefined : parseUsage(() => parseApproverClaim(o.approverClaim!));
  if (claim && !oidc) throw usage('--approver-claim needs --approver-oidc-issuer (a passkey carries no claims)');
  // Fail closed: signed-in approvers with no rule for the role would be nobody; say so at start.
  if (!subjects.length && !claim) throw usage('signed-in approvers need --approvers or --approver-claim (who may decide)');
  // Checked as a URL, kept as given: the discovery document must name exactly this issuer.
  if (oidc) parseUsage(() => checkIssuerUrl(o.approverOidcIssuer!));
  const secret = process.env[APPROVER_OIDC_SECRET_ENV];
  return {
    role: { subjects, ...(claim ? { claim } : {}) },
    ...(o.approverPasskeys ? { passkeys: true } : {}),
    ...(oidc
      ? {
          oidc: {
            issuer: o.approverOidcIssuer!,
            clientId: o.approverOidcClientId!,
            ...(secret ? { clientSecret: secret } : {}),
            ...(o.approverOidcScope ? { scopes: o.approverOidcScope.split(/\s+/).filter(Boolean) } : {}),
          },
        }
      : {}),
  };
}

/** `vrp gate approvers enroll --subject S --store X --page URL`: a one-time passkey enrollment link. */
export function registerApprovers(gate: Command, clock: Clock): void {
  const approvers = gate.command('approvers').description('known approvers of the approvals page: passkey enrollment');
  storeOption(
    approvers
      .command('enroll')
      .description('print a one-time link that enrolls a passkey for SUBJECT on the approvals page (served with --approver-passkeys)')
      .requiredOption('--subject <subject>', 'the approver the passkey signs in (as --approvers names them)')
      .option(
        '--page <url>',
        "the approvals page's URL as approvers open it (a passkey needs a domain: localhost, not 127.0.0.1)",
        'http://localhost:8932/',
      )
      .option('--ttl <duration>', 'how long the link stays usable: 30m, 2h', '30m'),
  ).action((o: GateStoreOptions & { subject: string; page: string; ttl: string }) =>
    run(o.json, async () => {
      const { enrollmentUrl, issueApproverEnrollment } = await import('@vrpkit/gate');
      const ttlMs = parseUsage(() => parseDuration(o.ttl, '--ttl'));
      if (ttlMs <= 0) throw usage('--ttl must be more than 0');
      const page = parseUsage(() => new URL(o.page).toString());
      const subject = o.subject.trim();
      if (!subject) throw usage('--subject must not be empty');
      await closing(openStore(o, false), async (store) => {
        const { token, expires_at } = await issueApproverEnrollment(store.approverPasskeys, { subject, now: clock.now(), ttlMs });
        const link = enrollmentUrl(page, token);
        // The link is printed this once; its token is stored only as a digest.
        if (o.json) printJson({ subject, link, expires_at: new Date(expires_at).toISOString() });
        else process.stdout.write(`${link}\n`);
      });
    }),
  );
}
