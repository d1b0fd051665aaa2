/**
 * OpenAI Responses `computer_call` items in real Chromium, by the same rules as the Anthropic
 * computer tool (T-E): the submit is a COMPUTER_USE act whose digest covers the live origin, URL and
 * form fields; a changed field or origin after approval is denied and nothing reaches the site; the
 * approved submit posts exactly once. Real Gate (SQLite file), real HTTPS site, Debian Chromium.
 */
import {
  type ComputerCallItemLike,
  type ComputerController,
  candidateActId,
  handleResponsesComputerCall,
  mapComputerCall,
  resolveActContext,
} from '@vrpkit/gate';
import { hasChromium } from '@vrpkit/testkit/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CheckoutSite, launchChromium, readLiveState, startCheckoutSite } from './scenarios-browser.js';
import { hostContext, openTestGate, TEST_POLICY, type TestGate } from './scenarios-gate.js';

const click = (call_id: string, extra: Partial<ComputerCallItemLike> = {}): ComputerCallItemLike => ({
  type: 'computer_call',
  id: `cu_${call_id}`,
  call_id,
  action: { type: 'click', button: 'left', x: 160, y: 220 },
  pending_safety_checks: [],
  status: 'completed',
  ...extra,
});

let t: TestGate;
beforeEach(async () => {
  t = await openTestGate();
});
afterEach(async () => {
  await t.close();
});

describe('mapComputerCall', () => {
  it('maps a computer_call to a COMPUTER_USE act at the browser controller, bound to the live origin', async () => {
    const ctx = await resolveActContext(hostContext(t.gate));
    if ('allow' in ctx) throw new Error('no context');
    const live = { url: 'https://pay.example/checkout', form: { action_url: 'https://pay.example/pay', fields: { amount: '150.00' } } };
    const act = mapComputerCall(click('call_1'), live, ctx);
    expect(act).toMatchObject({
      candidate_act_id: candidateActId('computer-call', 'sess55', 'call_1'),
      act_type: 'COMPUTER_USE',
      tool: { tool_id: 'computer_use_preview', function_id: 'click', tool_endpoint: 'https://pay.example' },
      destination: { destination_id: 'https://pay.example', destination_url: 'https://pay.example/pay' },
      finality_sink: { sink_type: 'BROWSER_CONTROLLER' },
      consequence_class: 'FINANCIAL',
    });
    // A passive action is informational; a pending safety check makes the provenance unknown.
    expect(mapComputerCall(click('call_2', { action: { type: 'move', x: 1, y: 1 } }), { url: live.url }, ctx).consequence_class).toBe(
      'INFORMATIONAL',
    );
    const flagged = mapComputerCall(
      click('call_3', { pending_safety_checks: [{ id: 'cu_sc_1', code: 'malicious_instructions' }] }),
      live,
      ctx,
    );
    expect(flagged.instruction_provenance).toEqual({ source_type: 'unknown', source_ref: 'openai-safety-checks:malicious_instructions' });
    expect(() => mapComputerCall(click('call_4', { status: 'in_progress' }), live, ctx)).toThrow(/not completed/);
    expect(() => mapComputerCall(click('call_5', { action: {} }), live, ctx)).toThrow(/action type/);
  });
});

describe("handleResponsesComputerCall and the model's safety checks", () => {
  it('an item with pending safety checks is refused before anything is read or done, and the checks are not acknowledged', async () => {
    // A hot envelope would let a passive move run at once; the model's own warning still stops it.
    const gate = await openTestGate({
      policy: {
        ...TEST_POLICY,
        hot_envelopes: [{ name: 'passive', consequence_classes: ['INFORMATIONAL'], tools: ['computer_use_preview'] }],
      },
    });
    try {
      const done: string[] = [];
      const controller: ComputerController = {
        liveState: async () => {
          done.push('read');
          return { url: 'https://pay.example/checkout' };
        },
        perform: async () => void done.push('perform'),
        screenshot: async () => 'data:image/png;base64,AAAA',
      };
      const flagged = click('call_sc', {
        action: { type: 'move', x: 1, y: 1 },
        pending_safety_checks: [{ id: 'sc1', code: 'malicious_instructions' }],
      });
      const r = await handleResponsesComputerCall(flagged, controller, hostContext(gate.gate));
      expect(r.outcome).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_INSTRUCTION_PROVENANCE_FAILURE' } });
      expect(r.input[0]).not.toHaveProperty('acknowledged_safety_checks');
      expect(done).toEqual([]);
      // The same move without a safety check runs in the hot envelope.
      const ok = await handleResponsesComputerCall(
        click('call_ok', { action: { type: 'move', x: 1, y: 1 } }),
        controller,
        hostContext(gate.gate),
      );
      expect(ok.outcome.invoked).toBe(true);
      expect(done).toEqual(['read', 'perform']);
    } finally {
      await gate.close();
    }
  });
});

describe.skipIf(!hasChromium('gate computer_call'))(
  'OpenAI computer_call in real Chromium: origin and field changes after approval',
  () => {
    const hosts = ['pay.example', 'pay.example-evil'];
    let site: CheckoutSite;
    let browser: Browser;
    let page: Page;
    beforeAll(async () => {
      site = await startCheckoutSite(hosts);
      browser = await launchChromium(site, hosts);
      page = await browser.newPage();
    });
    afterAll(async () => {
      await browser?.close();
      await site?.close();
    });

    it('approved submit runs once; an edited field or a moved origin is denied and nothing is posted', async () => {
      const performed: unknown[] = [];
      const controller: ComputerController = {
        liveState: (item) => {
          const a = item.action as { x: number; y: number };
          return readLiveState(page, { coordinate: [a.x, a.y] });
        },
        perform: async (action) => {
          performed.push(action);
          const a = action as { x: number; y: number };
          await Promise.all([page.waitForURL('**/pay'), page.mouse.click(a.x, a.y)]);
        },
        screenshot: async () => `data:image/png;base64,${(await page.screenshot()).toString('base64')}`,
      };
      const ctx = hostContext(t.gate);
      const authorized = `https://${hosts[0]}:${site.port}/checkout`;

      await page.goto(authorized);
      const first = await handleResponsesComputerCall(click('call_pay1'), controller, ctx);
      expect(first.outcome.decision).toMatchObject({ allow: false, code: 'EF_APPROVAL_REQUIRED' });
      expect(first.input[0]).toMatchObject({ type: 'computer_call_output', call_id: 'call_pay1', output: { type: 'computer_screenshot' } });
      expect(JSON.parse((first.input[1] as { content: string }).content).error.code).toBe('EF_APPROVAL_REQUIRED');
      expect((await t.gate.approve(candidateActId('computer-call', 'sess55', 'call_pay1'), 'alice@acme')).status).toBe('issued');

      // A field changed after approval is another digest: denied, no click.
      await page.fill('input[name=beneficiary]', 'vendor-666');
      expect((await handleResponsesComputerCall(click('call_pay1'), controller, ctx)).outcome.decision.code).toBe('EF_SCOPE_MISMATCH');
      // The page moved to a look-alike origin: destination deny.
      await page.goto(`https://${hosts[1]}:${site.port}/checkout`);
      expect((await handleResponsesComputerCall(click('call_pay1'), controller, ctx)).outcome.decision.code).toBe(
        'EF_DESTINATION_MISMATCH',
      );
      expect(performed).toEqual([]);
      expect(site.payments).toEqual([]);

      // Origin change invalidated the authority: back on the approved page it is spent (EF_005).
      await page.goto(authorized);
      expect((await handleResponsesComputerCall(click('call_pay1'), controller, ctx)).outcome.decision.code).toBe('EF_005');

      // A new approved submit on the unchanged page posts exactly once.
      await page.goto(authorized);
      await handleResponsesComputerCall(click('call_pay2'), controller, ctx);
      expect((await t.gate.approve(candidateActId('computer-call', 'sess55', 'call_pay2'), 'alice@acme')).status).toBe('issued');
      const ok = await handleResponsesComputerCall(click('call_pay2'), controller, ctx);
      expect(ok.outcome).toMatchObject({ invoked: true, decision: { allow: true } });
      expect(ok.input).toHaveLength(1);
      expect(site.payments).toEqual([{ host: `${hosts[0]}:${site.port}`, body: 'amount=150.00&beneficiary=vendor-441' }]);
      expect(performed).toHaveLength(1);
    });
  },
);
