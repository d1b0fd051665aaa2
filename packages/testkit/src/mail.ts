/**
 * A real SMTP server on 127.0.0.1 for the tests that mail a guest: the node's dev mailbox
 * (`startDevMailbox`, smtp-server, the server half of nodemailer's project). It accepts every
 * message and keeps its raw text, so a test reads the code a node mailed exactly as a mail client
 * would receive it. Never a mock transport.
 */
import { type DevMailbox, type ReceivedMail, startDevMailbox } from '@vrpkit/node';
import { simpleParser } from 'mailparser';

export type { ReceivedMail };
/** `url` for `--smtp-url` / `smtpMailer`; `received`, `next(to, after, ms)`, `code(to, after, ms)`, `close()`. */
export type TestSmtp = DevMailbox;
export const startTestSmtp: () => Promise<TestSmtp> = startDevMailbox;

/**
 * The text a mail client shows of a message the node sent (nodemailer's output), as a maintained
 * MIME parser reads it (mailparser, nodemailer's project): headers, transfer encodings
 * (quoted-printable, base64) and charsets undone. The plain-text part; empty when there is none.
 */
export async function mailText(raw: string): Promise<string> {
  return (await simpleParser(raw)).text ?? '';
}
