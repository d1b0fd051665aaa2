/**
 * `vrp demo --booking`: the gated booking scenario over UCP booking sessions on recorded model
 * responses against a fresh demo node (docs/booking.md), with and without the person's approval;
 * with it, the guest's code travels through the demo's local SMTP server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-demo-booking-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('vrp demo --booking', () => {
  it('with --yes: offer verified over MCP, receipt bound, quote, UCP session, approval, guest code by SMTP, one Complete with a verified receipt', async () => {
    const dir = join(tmp, 'approved');
    const r = await runVrpInProcess(['demo', '--booking', '--yes', '--booking-dir', dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('signature verified against the node');
    expect(r.stdout).toContain('MCP receipt verified and bound to the call');
    expect(r.stdout).toMatch(/safe to quote: [A-Z]{3} \d+\.\d\d/);
    expect(r.stdout).toMatch(/\? approve villa-booking\.example, 2027-04-10 → 2027-04-13, 2 guests, [A-Z]{3} \d+\.\d\d/);
    const session = r.stdout.match(/✓ UCP booking session (ucs_[A-Za-z0-9_-]+) created from the verified offer: requires_escalation/);
    expect(session).not.toBeNull();
    const id = session![1]!;
    // In order: the approval, the link to the guest, the code by mail, the confirmation, the Complete.
    const order = [
      '? approve',
      `→ continue_url handed to the guest: https://villa-booking.example/ucp/continue/${id}`,
      'mailed a one-time code to alice@example.com (read from the local SMTP server',
      'the guest confirmed with the code: the session is ready_for_complete',
      `✓ session ${id} is ready_for_complete`,
    ].map((line) => r.stdout.indexOf(line));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    const hold = r.stdout.match(new RegExp(`✓ session ${id} completed: booking (br_[A-Za-z0-9_-]+); booking receipt verified`));
    expect(hold).not.toBeNull();
    expect(r.stdout).toContain(`The host holds ${hold![1]}`);
    expect(r.stdout).toContain(`node bookings list --data-dir ${dir}`);
    // The listing `vrp node bookings list` prints: exactly this one hold, pending.
    expect(r.stdout).toMatch(new RegExp(`^${hold![1]}  2027-04-10 → 2027-04-13  2 guests  \\d+ [A-Z]{3} \\(minor units\\)  pending`, 'm'));
    const listed = await runVrpInProcess(['node', 'bookings', 'list', '--data-dir', dir, '--json']);
    expect(JSON.parse(listed.stdout).bookings.map((b: { booking_id: string }) => b.booking_id)).toEqual([hold![1]]);
  }, 90_000);

  it('without --yes: stops at the approval, says how to give it, and nothing is held', async () => {
    const dir = join(tmp, 'pending');
    const r = await runVrpInProcess(['demo', '--booking', '--booking-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('… approval needed for act:anthropic:demo-booking:');
    expect(r.stdout).toContain('run again with --yes');
    expect(r.stdout).toMatch(/✓ UCP booking session ucs_\S+ created from the verified offer: requires_escalation \(no night held yet\)/);
    expect(r.stdout).not.toContain('continue_url handed');
    expect(r.stdout).not.toContain('completed: booking');
    const listed = await runVrpInProcess(['node', 'bookings', 'list', '--data-dir', dir, '--json']);
    expect(JSON.parse(listed.stdout).bookings).toEqual([]);
  }, 90_000);
});
