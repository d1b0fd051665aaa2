/**
 * The host's terms and privacy pages a UCP Booking links to (`links[]`: `terms_of_service` and
 * `privacy_policy`, "mandatory for legal compliance"; `common/types/link.json`): the property file's
 * `terms_url` / `privacy_url` when the host has its own, otherwise pages the node serves on its own
 * origin, stating only what the node knows for certain: the booking terms its offers sign (the
 * property file: price paid at the property, the refund schedule, stay rules) and what the node
 * does with a guest's details.
 */
import type { Context, Hono } from 'hono';
import { page } from '../booking/page.js';
import { escapeHtml as esc, HTML_SECURITY_HEADERS } from '../http/html.js';
import type { NodePublisher, PropertyView } from '../service/types.js';
import { refundWords } from './terms.js';

export const UCP_TERMS_PATH = '/ucp/terms';
export const UCP_PRIVACY_PATH = '/ucp/privacy';

/** The two legal links of every session answer, the host's own pages first choice. */
export function legalLinks(p: PropertyView, origin: string): { type: string; url: string; title: string }[] {
  return [
    { type: 'terms_of_service', url: p.terms_url ?? `${origin}${UCP_TERMS_PATH}`, title: `Booking terms of ${p.name}` },
    { type: 'privacy_policy', url: p.privacy_url ?? `${origin}${UCP_PRIVACY_PATH}`, title: `Privacy notice of ${p.name}` },
  ];
}

const item = (text: string) => `<li>${esc(text)}</li>`;

/** The booking terms the node's offers and sessions carry, from the property file. */
export function renderTermsPage(domain: string, p: PropertyView): string {
  const rules = [
    `You book directly with the host of ${p.name} (${domain}); an agent or booking platform only passes your request on.`,
    'The price of a stay is the total of the offer the host signed for it, shown line by line before you confirm. Nothing is charged when you book: you pay the host at the property.',
    'A booking request holds the dates only once you confirm it with the code emailed to you on the host’s page; the host then confirms or declines it.',
    `Check-in from ${p.check_in_time}, check-out by ${p.check_out_time}; ${p.min_nights}–${p.max_nights} nights; at most ${p.max_guests} guests.`,
    ...(p.pets_label ? [`Pets: ${p.pets_label}.`] : []),
    `Cancellation: ${refundWords(p.refund_schedule)}`,
  ];
  return page(
    `Booking terms: ${p.name}`,
    `<p class="note">${esc(domain)}</p><h1>Booking terms</h1><ul id="terms">${rules.map(item).join('')}</ul>`,
  );
}

/** What the node does with a guest's details. */
export function renderPrivacyPage(domain: string, p: PropertyView): string {
  const facts = [
    `This page is the privacy notice of ${p.name} for bookings made on ${domain}.`,
    'What is kept: the details a booking platform sends for your stay (the booker’s and guests’ names, email, phone and address as sent), the stay and its price.',
    'Why: to send you the one-time confirmation code by email, and for the host to arrange your stay.',
    'Where: in the host’s own booking system on this server. Codes are stored only as digests; request logs carry no guest details.',
    'Who sees it: the host. It is not sold or passed to anyone else; the confirmation email goes through the host’s mail server.',
    `Questions or deletion requests: contact the host (${p.url}).`,
  ];
  return page(
    `Privacy notice: ${p.name}`,
    `<p class="note">${esc(domain)}</p><h1>Privacy notice</h1><ul id="privacy">${facts.map(item).join('')}</ul>`,
  );
}

/** The node's own terms and privacy pages (only linked to when the property file names no pages of the host's). */
export function mountUcpLegal(app: Hono, publisherOf: (c: Context) => NodePublisher): void {
  const html = (c: Context, body: string) => c.html(body, 200, { ...HTML_SECURITY_HEADERS, 'cache-control': 'public, max-age=300' });
  app.get(UCP_TERMS_PATH, (c) => {
    const p = publisherOf(c);
    return html(c, renderTermsPage(p.canonicalDomain, p.property()));
  });
  app.get(UCP_PRIVACY_PATH, (c) => {
    const p = publisherOf(c);
    return html(c, renderPrivacyPage(p.canonicalDomain, p.property()));
  });
}
