/**
 * The approvals page's routes for approval links (approvals/links.ts; issue 32 item 4): the page
 * at exactly one act (`GET /act/<token>`), the sign-in a link shows without a session
 * (`POST /signin`), and the spending of a link by the decision made through it. A reused, expired,
 * unknown or foreign-act link decides nothing and says which it is.
 */
import type { Clock } from '@vrpkit/core';
import type { Context } from 'hono';
import { type ApprovalLinks, approvalLinkDigest, type LinkScope, readApprovalLink } from '../approvals/links.js';
import type { ApproverIdentity } from '../approvers/identity.js';
import type { Escalations } from '../store/ports.js';
import { crossSiteReason } from './forms.js';
import { actPage, decisionPage, messagePage } from './pages.js';
import { type PendingViewSources, pendingView } from './pending-view.js';
import { formTokensOf, landingPath, type Session, sameSecret, sessionOf, startSession } from './session.js';

type Status = 401 | 403 | 404 | 409 | 410;

/** `POST /signin` (token, link): opens a session (the token mode's `who`) and goes on to the link's act. */
export function signInRoute(pageToken: string, sessions: Map<string, Session>, who: ApproverIdentity) {
  return async (c: Context) => {
    // A sign-in from another site is refused before it is read (no login CSRF).
    const why = crossSiteReason({ origin: c.req.header('origin'), fetchSite: c.req.header('sec-fetch-site') }, new URL(c.req.url).origin);
    if (why) return c.html(messagePage('Refused', `Only this page's own forms can sign in: ${why}.`), 403);
    const form = await c.req.parseBody();
    const token = typeof form.token === 'string' ? form.token : '';
    const link = typeof form.link === 'string' ? form.link : '';
    if (!sameSecret(token, pageToken)) return c.html(messagePage('Refused', 'The token is not valid.'), 401);
    startSession(c, sessions, who);
    return c.redirect(landingPath(`/act/${link}`), 303);
  };
}

/** `GET /act/<token>`: the act the link is scoped to, while the link and the escalation can still decide. */
export function actLinkRoute(o: PendingViewSources & { links: ApprovalLinks; escalations: Pick<Escalations, 'get'> }, clock: Clock) {
  return async (c: Context) => {
    const token = c.req.param('link') ?? '';
    const now = clock.now();
    const s = await readApprovalLink(o.links, token, now);
    if (s.state !== 'open') {
      const r = linkRefusal(s.state);
      return c.html(messagePage(r.title, r.message), r.status);
    }
    const row = await o.escalations.get(s.link.candidate_act_id);
    if (!row || row.binding_digest !== s.link.binding_digest) {
      const r = linkRefusal('foreign');
      return c.html(messagePage(r.title, r.message), r.status);
    }
    if (row.status !== 'PENDING' || row.expires_at <= now) return c.html(decisionPage(row, false), 409);
    return c.html(actPage(await pendingView(o, row), formTokensOf(c), token, s.link.expires_at, sessionOf(c).who));
  };
}

interface LinkRefusal {
  title: string;
  message: string;
  status: Status;
}

/** Why a link decides nothing, as the person reads it. */
function linkRefusal(state: 'unknown' | 'used' | 'expired' | 'foreign'): LinkRefusal {
  switch (state) {
    case 'used':
      return { title: 'Link already used', message: 'This approval link was already used; it decides nothing again.', status: 410 };
    case 'expired':
      return {
        title: 'Link expired',
        message: 'This approval link has expired; nothing can be decided with it. A retried call brings a new link.',
        status: 410,
      };
    case 'foreign':
      return { title: 'Refused', message: 'This approval link is for another act; nothing was decided.', status: 409 };
    default:
      return { title: 'Not found', message: 'This approval link is not valid; nothing can be decided with it.', status: 404 };
  }
}

/**
 * Spend `link` for a decision on `scope`, before the decision is made: undefined when spent, else
 * why nothing may be decided (used, expired, unknown, or scoped to another act). A link whose
 * decision then changes nothing (the act was decided meanwhile) stays spent: it is single-use.
 */
export async function spendLink(
  links: ApprovalLinks,
  link: string,
  scope: LinkScope,
  approver: string,
  now: number,
): Promise<LinkRefusal | undefined> {
  const s = await readApprovalLink(links, link, now);
  if (s.state !== 'open') return linkRefusal(s.state);
  if (s.link.candidate_act_id !== scope.candidate_act_id || s.link.binding_digest !== scope.binding_digest) return linkRefusal('foreign');
  // The conditional UPDATE decides: of two racing decisions through one link, one spends it.
  const spent = await links.use(approvalLinkDigest(link), scope, approver, now);
  return spent ? undefined : linkRefusal('used');
}
