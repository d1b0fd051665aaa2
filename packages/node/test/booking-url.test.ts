/**
 * `direct_booking_url` (Core VRP v0.1 §5.1) is written without a URLSearchParams per offer: it
 * must equal the form-encoded query for every value the request parser lets through.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { directBookingUrl } from '../src/offer.js';

describe('directBookingUrl', () => {
  it('equals the URLSearchParams form for parser-checked dates, guest counts and offer ids', () => {
    const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
    for (let i = 0; i < 500; i++) {
      const r = { check_in: day(i), check_out: day(i + 1 + (i % 30)), guests: 1 + (i % 40) };
      const offerId = randomUUID();
      const q = new URLSearchParams({ checkIn: r.check_in, checkOut: r.check_out, guests: String(r.guests), offer: offerId });
      expect(directBookingUrl('villa.example', r, offerId)).toBe(`https://villa.example/book?${q}`);
    }
  });
});
