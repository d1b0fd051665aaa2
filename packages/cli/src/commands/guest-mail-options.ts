/**
 * `--smtp-url`, `--mail-from`, `--smtp-ca`: the transport the UCP guest page mails its one-time
 * codes by, the same flags on `vrp node serve` and `vrp platform serve` (a platform's for every tenant).
 */
import { readFileSync } from 'node:fs';
import type { SmtpMailerOptions } from '@vrpkit/node';
import type { Command } from 'commander';

export interface GuestMailCommandOptions {
  smtpUrl?: string;
  mailFrom?: string;
  smtpCa?: string;
}

export function guestMailOptions(c: Command): Command {
  return c
    .option(
      '--smtp-url <url>',
      'SMTP server the UCP guest page mails one-time codes through (smtp://… or smtps://…); without it no guest can confirm a session',
    )
    .option(
      '--mail-from <address>',
      'with --smtp-url: the sender of the guest mails (default bookings@{domain}, each tenant’s own on a platform)',
    )
    .option('--smtp-ca <file>', 'with --smtp-url: extra trusted CA certificate (PEM) for the SMTP server');
}

/** The guest page's mail transport the flags name, or none without `--smtp-url`. */
export function guestMail(o: GuestMailCommandOptions): { guestMail?: Partial<SmtpMailerOptions> & Pick<SmtpMailerOptions, 'url'> } {
  if (!o.smtpUrl) return {};
  return {
    guestMail: {
      url: o.smtpUrl,
      ...(o.mailFrom ? { from: o.mailFrom } : {}),
      ...(o.smtpCa ? { ca: readFileSync(o.smtpCa, 'utf8') } : {}),
    },
  };
}
