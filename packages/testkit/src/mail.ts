/**
 * A real SMTP server on 127.0.0.1 for the tests that mail a guest (smtp-server, the server half of
 * nodemailer's project): it accepts every message and keeps its raw text, so a test reads the code
 * a node mailed exactly as a mail client would receive it. Never a mock transport.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface TestSmtp {
  /** `smtp://127.0.0.1:PORT` for `--smtp-url` / `smtpMailer`. */
  url: string;
  received: ReceivedMail[];
  /** The next message to `to` that arrived after `after` messages, waiting up to `ms`. */
  next(to: string, after: number, ms?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  // Plain SMTP on loopback without AUTH: the node's mailer is what is under test, not TLS to a mail host.
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    async next(to, after, ms = 10_000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = received.slice(after).find((m) => m.to.includes(to));
        if (found) return found;
        if (Date.now() > until) throw new Error(`no mail to ${to} within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

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
