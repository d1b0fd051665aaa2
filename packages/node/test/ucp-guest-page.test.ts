/**
 * The guest confirms a UCP session in Chromium on the host's own page (`continue_url`): the page
 * shows exactly the session's totals and terms; the person asks for a code, reads it from the mail
 * the node sent to a real local SMTP server, types it, and only then is the stay held. Real https
 * (dev CA pinned through the agent's own Chromium network flags), the node's CSP and form guard as
 * served. Skips, saying so, without Chromium (`VRPKIT_CHROMIUM`).
 */
import { join } from 'node:path';
import { chromiumNetworkArgs, createHardenedFetch } from '@vrpkit/agent';
import {
  OFFER_ENDPOINT_PATH,
  type OfferEnvelope,
  UCP_BOOKING_SESSIONS,
  UCP_PROFILE_PATH,
  UCP_REST_BASE_PATH,
  type UcpSessionView,
  ucpStayId,
} from '@vrpkit/protocol';
import { hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { startTestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { mailedCodeOf, ucpRestHeaders } from '@vrpkit/testkit/ucp';
import { describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 90_000 });

const BROWSER = hasChromium('UCP guest page');
const DOMAIN = 'ucp-page.example';
const START = Date.parse('2027-02-01T09:00:00Z');

describe.skipIf(!BROWSER)('UCP guest page in Chromium', () => {
  it('shows the session’s totals and terms, confirms with the mailed code, and only then holds the stay', async () => {
    const tmp = tempDir('ucp-page');
    const smtp = await startTestSmtp();
    const served = await serveTestNode(DOMAIN, join(tmp.dir, 'node'), testClock(START), {
      bookingRateLimit: 10_000,
      guestMail: { url: smtp.url, from: `Bookings <bookings@${DOMAIN}>` },
    });
    const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${served.node.port}`], ca: served.node.caPem! });
    const [checkIn, checkOut] = [dayAfter(START, 25), dayAfter(START, 28)];
    const stay = `check_in=${checkIn}&check_out=${checkOut}&guests=2`;
    const available = async () =>
      (JSON.parse((await served.client.get(`${OFFER_ENDPOINT_PATH}?${stay}`)).text) as OfferEnvelope).offer.availability.available;
    try {
      const offer = JSON.parse((await served.client.get(`${OFFER_ENDPOINT_PATH}?${stay}`)).text) as OfferEnvelope;
      const profile = JSON.parse((await served.client.get(UCP_PROFILE_PATH)).text) as {
        ucp: { capabilities: Record<string, { config: { property: { id: string } } }[]> };
      };
      const propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']![0]!.config.property.id;
      const created = await served.client.request('POST', `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`, {
        headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
        body: JSON.stringify({
          property: { id: propertyId },
          stays: [{ id: ucpStayId(propertyId), stay_dates: { start_date: checkIn, end_date: checkOut }, occupancy: { total: 2 } }],
          booker: { email: 'page-guest@example.org', first_name: 'Ada', last_name: 'Guest' },
          'dev.vrpkit.lodging': { offer_jws: offer.signature.jws },
        }),
      });
      const session = JSON.parse(created.text) as UcpSessionView;
      const continueUrl = new URL(session.continue_url!);
      const args = await chromiumNetworkArgs(continueUrl, {
        fetch,
        options: { network: { connectTo: [`${DOMAIN}:443:127.0.0.1:${served.node.port}`], ca: served.node.caPem! } },
      });
      const browser = await launchChromium(args);
      try {
        const tab = await browser.newPage({ viewport: { width: 390, height: 844 } });
        await tab.goto(continueUrl.href);
        // Exactly the session's totals, in its order, with its amounts.
        const shown = await tab.locator('#totals tr[data-type]').evaluateAll((rows) =>
          rows.map((r) => ({
            type: r.getAttribute('data-type'),
            amount: Number(r.querySelector('[data-minor]')?.getAttribute('data-minor')),
          })),
        );
        expect(shown).toEqual(session.totals.map((t) => ({ type: t.type, amount: t.amount })));
        expect(await tab.locator('#payment-terms li').getAttribute('data-type')).toBe('at_property');
        expect(await tab.locator('#session-status').getAttribute('data-status')).toBe('requires_escalation');
        expect(await available()).toBe(true);

        const before = smtp.received.length;
        await Promise.all([tab.waitForURL(continueUrl.href), tab.locator('#send-code button').click()]);
        const code = mailedCodeOf((await smtp.next('page-guest@example.org', before)).raw)!;
        expect(code).toMatch(/^\d{6}$/);
        // Asking for a code holds nothing.
        expect(await available()).toBe(true);
        await tab.locator('#confirm input[name=code]').fill(code);
        await Promise.all([tab.waitForURL(continueUrl.href), tab.locator('#confirm button').click()]);
        expect(await tab.locator('#session-status').getAttribute('data-status')).toBe('ready_for_complete');
        expect(await available()).toBe(false);
      } finally {
        await browser.close();
      }
    } finally {
      await fetch.close();
      await closeTestNode(served, tmp);
      await smtp.close();
    }
  });
});
