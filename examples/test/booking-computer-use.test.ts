/**
 * The booking by computer use, in real Chromium (Tool-Use Binding draft, computer use): the model
 * drives the node's own /book page; the submit is a COMPUTER_USE act whose digest covers the live
 * origin, page URL and form fields the controller read right before the click. A person approves
 * that state; a changed field or origin after the approval is denied with no request reaching
 * the node, and the approved submit creates exactly one UCP session, whose page the guest then
 * confirms in the same browser with the code the node mailed: only then is one hold made.
 */
import { chromiumNetworkArgs } from '@vrpkit/agent';
import {
  type AgentCandidateAct,
  actBindingDigest,
  candidateActId,
  handleAnthropicMessage,
  type LiveBrowserState,
  openSqliteStore,
} from '@vrpkit/gate';
import { listBookings } from '@vrpkit/node';
import { hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { testClock } from '@vrpkit/testkit/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_BOOKER, RECORDED_AT } from '../src/booking-loop.js';
import { type BookingWorld, LOOKALIKE_DOMAIN, NODE_DOMAIN, openBookingHost, SINK_ID, startBookingWorld } from './booking-support.js';

const clock = testClock(RECORDED_AT);

let world: BookingWorld;
let browser: Browser;
let bookUrl: string;

describe.skipIf(!hasChromium('booking-computer-use'))('booking by computer use on the node’s /book page', () => {
  beforeAll(async () => {
    world = await startBookingWorld(clock);
    // The page the offer's signed direct_booking_url leads to (Core VRP v0.1 §5.1), on the node's own origin.
    bookUrl = `https://${NODE_DOMAIN}/book?checkIn=2027-04-10&checkOut=2027-04-13&guests=2`;
    // Chromium trusts exactly the two leaf keys it is shown: the node's and the look-alike's.
    const ctx = { fetch: world.fetch, options: { network: world.network } };
    const SPKI = '--ignore-certificate-errors-spki-list=';
    const spki = (args: string[]) => args.find((a) => a.startsWith(SPKI))!.slice(SPKI.length);
    const nodeArgs = await chromiumNetworkArgs(new URL(`https://${NODE_DOMAIN}/`), ctx);
    const lookalikeArgs = await chromiumNetworkArgs(new URL(`https://${LOOKALIKE_DOMAIN}/`), ctx);
    const args = [...nodeArgs.filter((a) => !a.startsWith(SPKI)), `${SPKI}${spki(nodeArgs)},${spki(lookalikeArgs)}`];
    browser = await launchChromium(args);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  /** The controller's read of the live page right before the click: URL and the form the button submits. */
  async function liveState(page: Page, input: unknown): Promise<LiveBrowserState> {
    const [x, y] = (input as { coordinate: [number, number] }).coordinate;
    const form = await page.evaluate(
      ([px, py]) => {
        const button = document.elementFromPoint(px, py)?.closest('button[type=submit]') as HTMLButtonElement | null;
        if (!button?.form) return null;
        const fields: Record<string, string> = {};
        for (const [k, v] of new FormData(button.form)) fields[k] = typeof v === 'string' ? v : 'file';
        return { action_url: button.form.action, fields };
      },
      [x, y] as const,
    );
    return form ? { url: page.url(), form } : { url: page.url() };
  }

  /** The page with the guest's details typed in, and the model's click on "Request booking". */
  async function openForm(url: string, blockId: string) {
    // Tall enough that the whole form is on screen: a click lands where the model points.
    const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    await page.goto(url);
    await page.fill('input[name=guest_first_name]', DEMO_BOOKER.first_name);
    await page.fill('input[name=guest_last_name]', DEMO_BOOKER.last_name);
    await page.fill('input[name=guest_email]', DEMO_BOOKER.email);
    const box = await page.locator('#booking-form button[type=submit]').boundingBox();
    if (!box) throw new Error('no submit button on /book');
    const input = { action: 'left_click', coordinate: [Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2)] };
    // The controller reads the booking form under the click: the act binds its fields.
    const state = await liveState(page, input);
    expect(state.form).toMatchObject({ action_url: `${new URL(url).origin}/book`, fields: { guest_email: DEMO_BOOKER.email } });
    return { page, msg: { content: [{ type: 'tool_use', id: blockId, name: 'computer', input }] } };
  }

  async function gated(name: string) {
    const opened = await openBookingHost(world, { clock, name });
    const ctx = opened.host.mapContext('computer-use');
    const clicks: unknown[] = [];
    return {
      ...opened,
      ctx,
      clicks,
      /** One model turn through the gate; the click is performed only on allow. */
      async turn(page: Page, msg: { content: Array<{ type: string; id: string; name: string; input: unknown }> }) {
        const tools = {
          computer: async (input: { coordinate: [number, number] }) => {
            clicks.push(input);
            // Done when the node has answered the form's POST (303) and the session's page it leads to has loaded.
            await Promise.all([
              page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/book'),
              page.waitForURL((u) => u.pathname.startsWith('/ucp/continue/'), { waitUntil: 'load' }),
              page.mouse.click(...input.coordinate),
            ]);
            return { clicked: true };
          },
        };
        return (await handleAnthropicMessage(msg, tools, ctx, { liveState: (b) => liveState(page, b.input) })).outcomes[0]!;
      },
      /** A person approves the escalated act exactly as it was shown (its binding digest, as `vrp gate pending` lists it). */
      async approveHeld(id: string) {
        const store = await openSqliteStore(opened.storeFile);
        try {
          const row = await store.escalations.get(id);
          const act = JSON.parse(row!.act_json) as AgentCandidateAct;
          expect((await opened.gate.approve(id, DEMO_BOOKER.email, actBindingDigest(act, SINK_ID))).status).toBe('issued');
        } finally {
          await store.close();
        }
      },
    };
  }

  it('the approved submit creates exactly one session; the guest confirms it on its page with the mailed code and one hold is made', async () => {
    const before = world.bookPosts();
    const g = await gated('cu-approved');
    const { page, msg } = await openForm(bookUrl, 'toolu_cu_submit');
    expect((await g.turn(page, msg)).decision.code).toBe('EF_APPROVAL_REQUIRED');
    expect(g.clicks).toEqual([]);
    await g.approveHeld(candidateActId('computer', g.ctx.session_id, 'toolu_cu_submit'));
    const ran = await g.turn(page, msg);
    expect(ran).toMatchObject({ invoked: true, decision: { allow: true } });
    expect(world.bookPosts()).toBe(before + 1);
    // The session's page on the node's origin: nothing is held until the guest confirms.
    expect(new URL(page.url()).origin).toBe(`https://${NODE_DOMAIN}`);
    await expect(page.locator('#session-status').getAttribute('data-status')).resolves.toBe('requires_escalation');
    const held = async () =>
      (await listBookings({ dataDir: world.dataDir })).filter((b) => b.check_in === '2027-04-10' && b.status === 'pending');
    expect(await held()).toHaveLength(0);
    // The same block again: the authority is spent, no second click, no second request.
    expect((await g.turn(page, msg)).decision.code).toBe('EF_005');
    expect(world.bookPosts()).toBe(before + 1);
    // The guest (a person, not the model) asks for the code and types it back.
    const mails = world.mailbox.received.length;
    const posted = () =>
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.startsWith('/ucp/continue/'));
    await Promise.all([posted(), page.locator('#send-code button').click()]);
    await page.waitForLoadState('load');
    const code = await world.mailbox.code(DEMO_BOOKER.email, mails);
    await page.fill('#confirm input[name=code]', code);
    await Promise.all([posted(), page.locator('#confirm button').click()]);
    await page.waitForLoadState('load');
    await expect(page.locator('#session-status').getAttribute('data-status')).resolves.toBe('ready_for_complete');
    expect(await held()).toHaveLength(1);
    await page.close();
  });

  it('a field changed after approval is denied EF_SCOPE_MISMATCH and nothing reaches the node', async () => {
    const before = world.bookPosts();
    const g = await gated('cu-field');
    const { page, msg } = await openForm(`https://${NODE_DOMAIN}/book?checkIn=2027-05-10&checkOut=2027-05-12&guests=2`, 'toolu_cu_field');
    expect((await g.turn(page, msg)).decision.code).toBe('EF_APPROVAL_REQUIRED');
    await g.approveHeld(candidateActId('computer', g.ctx.session_id, 'toolu_cu_field'));
    await page.fill('input[name=guest_email]', 'bookings@stays-operator.example');
    const denied = await g.turn(page, msg);
    expect(denied).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_SCOPE_MISMATCH' } });
    expect(g.clicks).toEqual([]);
    expect(world.bookPosts()).toBe(before);
    await page.close();
  });

  it('an origin changed after approval is denied EF_DESTINATION_MISMATCH and nothing reaches the node', async () => {
    const before = world.bookPosts();
    const g = await gated('cu-origin');
    const path = '/book?checkIn=2027-06-10&checkOut=2027-06-12&guests=2';
    const approvedPage = await openForm(`https://${NODE_DOMAIN}${path}`, 'toolu_cu_origin');
    expect((await g.turn(approvedPage.page, approvedPage.msg)).decision.code).toBe('EF_APPROVAL_REQUIRED');
    await g.approveHeld(candidateActId('computer', g.ctx.session_id, 'toolu_cu_origin'));
    // An injected link: the same form, the same click, on a look-alike origin.
    const moved = await openForm(`https://${LOOKALIKE_DOMAIN}${path}`, 'toolu_cu_origin');
    const denied = await g.turn(moved.page, approvedPage.msg);
    expect(denied).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_DESTINATION_MISMATCH' } });
    expect(g.clicks).toEqual([]);
    expect(world.bookPosts()).toBe(before);
    await approvedPage.page.close();
    await moved.page.close();
  });
});
