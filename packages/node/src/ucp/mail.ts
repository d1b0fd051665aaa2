/**
 * The guest's one-time code by mail: nodemailer to the host's SMTP server (`--smtp-url`). The mail
 * holds the code, the host's domain, the stay and its total as the page shows them, and the page's
 * address; nothing else of the session. A failed send is the caller's to show: the code was not sent.
 * The booking notices (the host's decision to the guest, a confirmed reservation to the host) leave
 * by the same transport.
 */
import nodemailer from 'nodemailer';
import type { NoticeMail, NoticeMailer } from '../booking/ports.js';
import type { ConfirmationMail, GuestMailer } from './ports.js';

export interface SmtpMailerOptions {
  /** `smtp://user:pass@host:port` or `smtps://…` (nodemailer's connection URL). */
  url: string;
  /** The sender, e.g. `Villa Demo <bookings@villa.example>`. */
  from: string;
  /** Extra CA certificates to trust for the SMTP server's TLS (PEM), e.g. a test CA. */
  ca?: string;
}

/** The guest's codes and the booking notices (booking/notice.ts) through one SMTP transport. */
export function smtpMailer(o: SmtpMailerOptions): GuestMailer & NoticeMailer {
  const transport = nodemailer.createTransport({ url: o.url, ...(o.ca ? { tls: { ca: o.ca } } : {}) });
  return {
    async sendConfirmationCode(m: ConfirmationMail): Promise<void> {
      await transport.sendMail({
        from: o.from,
        to: m.to,
        subject: `Your confirmation code for ${m.canonicalDomain}: ${m.code}`,
        text: [
          `Your code to confirm your stay request on ${m.canonicalDomain} is ${m.code}.`,
          '',
          m.summary,
          '',
          `Enter it on ${m.continueUrl} within 15 minutes. If you did not ask for this, ignore this mail: nothing is booked without the code.`,
        ].join('\n'),
      });
    },
    async sendNotice(m: NoticeMail): Promise<void> {
      await transport.sendMail({ from: o.from, to: m.to, subject: m.subject, text: m.text });
    },
  };
}
