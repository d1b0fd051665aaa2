/**
 * The approvals page's forms refuse cross-site posts (issue 36 defect 5's rule, applied to the
 * gate's page): every state-changing POST must come from the page's own origin, as the browser
 * reports it (`Sec-Fetch-Site`, `Origin`), and carry a token made for exactly that form.
 *
 * The token is an HMAC under the session's secret of the form's action and the values it
 * decides (act id, binding digest and decision; or server, tool and digest): a token copied from
 * one form cannot approve another act, pin another tool or turn a reject into an approve.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What the form binds, in order: its action, then the values it submits as hidden fields. */
export type FormSubject = readonly [action: '/decide' | '/pin', ...values: string[]];

/** The token of one form under a session's secret: base64url HMAC-SHA256 of the subject as a JSON array (one encoding per subject). */
export function formToken(secret: string, subject: FormSubject): string {
  return createHmac('sha256', secret).update(JSON.stringify(subject)).digest('base64url');
}

/** True when `given` is the token of exactly `subject` under `secret` (compared in constant time). */
export function isFormToken(secret: string, subject: FormSubject, given: string): boolean {
  const expected = Buffer.from(formToken(secret, subject));
  const g = Buffer.from(given);
  return g.length === expected.length && timingSafeEqual(g, expected);
}

/**
 * Why a POST is not from the page itself, or null when it may be. A browser sends
 * `Sec-Fetch-Site` (Fetch Metadata) and `Origin` on every form POST: anything but `same-origin`
 * (or `none`, typed by the person) and any other origin than the page's is refused. A client
 * that sends neither (curl, a script holding the session cookie) is no cross-site browser; the
 * form token still binds what it posts.
 */
export function crossSiteReason(
  headers: { origin?: string | undefined; fetchSite?: string | undefined },
  pageOrigin: string,
): string | null {
  if (headers.fetchSite !== undefined && headers.fetchSite !== 'same-origin' && headers.fetchSite !== 'none')
    return `the request is ${headers.fetchSite} (Sec-Fetch-Site)`;
  if (headers.origin !== undefined && headers.origin !== pageOrigin) return `the request comes from another origin (${headers.origin})`;
  return null;
}
