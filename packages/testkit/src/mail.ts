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
