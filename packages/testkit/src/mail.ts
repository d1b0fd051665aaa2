/**
 * A real SMTP server on 127.0.0.1 for the tests that mail a guest: the node's dev mailbox
 * (`startDevMailbox`, smtp-server, the server half of nodemailer's project). It accepts every
 * message and keeps its raw text, so a test reads the code a node mailed exactly as a mail client
 * would receive it. Never a mock transport.
 */
import { type DevMailbox, type ReceivedMail, startDevMailbox } from '@vrpkit/node';

export type { ReceivedMail };
/** `url` for `--smtp-url` / `smtpMailer`; `received`, `next(to, after, ms)`, `code(to, after, ms)`, `close()`. */
export type TestSmtp = DevMailbox;
export const startTestSmtp: () => Promise<TestSmtp> = startDevMailbox;

/**
 * The text a mail client shows of a single-part plain-text message the node sent (nodemailer's
 * output): the body after the headers, undone from quoted-printable (RFC 2045 §6.7: soft line
 * breaks and `=XX` octets) when the message says it is, read as UTF-8.
 */
export function mailText(raw: string): string {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split);
  const body = raw.slice(split + 4);
  if (!/^content-transfer-encoding:\s*quoted-printable/im.test(headers)) return body;
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}
