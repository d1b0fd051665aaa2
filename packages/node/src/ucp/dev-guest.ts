/**
 * The guest's side of a dev node (`vrp demo --booking`, the example booking loops): a local SMTP
 * server (smtp-server, the server half of nodemailer's project) that receives the one-time code the
 * node mails, and the two steps a guest takes on the host's page (`continue_url`, UCP Booking: the
 * buyer finalises on the business's own page): "email me a code", then "confirm with the code",
 * each printed. Dev equals prod minus the CA and the mail host: the node's mailer and page are the
 * real ones. Only a demo confirms for the guest; a real agent host hands the link to a person.
 */
import type { AddressInfo } from 'node:net';
import type { FetchLike } from '@vrpkit/core';

/** One message as the SMTP server received it: its envelope recipients and its raw text. */
export interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface DevMailbox {
  /** `smtp://127.0.0.1:PORT`, the dev node's `--smtp-url`. */
  url: string;
  /** Every message received, in order, exactly as a mail client would receive it. */
  received: ReceivedMail[];
  /** The next message to `to` that arrived after `after` messages, waiting up to `ms`. */
  next(to: string, after: number, ms?: number): Promise<ReceivedMail>;
  /** The six-digit code of the next mail to `to` (after `after` mails), waiting up to `ms`. */
  code(to: string, after: number, ms?: number): Promise<string>;
  close(): Promise<void>;
}

/** The code in the node's mail, from its subject ("Your confirmation code for DOMAIN: NNNNNN", ucp/mail.ts). */
export const mailedCodeOf = (raw: string): string | undefined => /code for [^:\r\n]+: (\d{6})/.exec(raw)?.[1];

/** A real SMTP server on 127.0.0.1 that accepts every message and keeps it (the tests' mail server too). */
export async function startDevMailbox(): Promise<DevMailbox> {
  // Loaded here, not with the package: a node that serves real guests never runs an SMTP server.
  const { SMTPServer } = await import('smtp-server');
  const received: ReceivedMail[] = [];
  // Plain SMTP on loopback without AUTH: nothing leaves this machine.
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
  const next = async (to: string, after: number, ms = 10_000): Promise<ReceivedMail> => {
    const until = Date.now() + ms;
    for (;;) {
      const found = received.slice(after).find((m) => m.to.includes(to));
      if (found) return found;
      if (Date.now() > until) throw new Error(`no mail to ${to} within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    next,
    async code(to, after, ms) {
      const code = mailedCodeOf((await next(to, after, ms)).raw);
      if (!code) throw new Error('the mail holds no code');
      return code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The page's state after a step: `data-status` of the session, `data-refusal` of a refused step. */
const statusOf = (html: string) => ({
  status: /id="session-status" data-status="([a-z_]+)"/.exec(html)?.[1] ?? 'unknown',
  refusal: /data-refusal="([a-z_]+)"/.exec(html)?.[1],
});

/**
 * One step on the guest page as the guest's browser does it: read the page for its form token,
 * then post the step from that origin (the node's form guard: Fetch Metadata, Origin, the token).
 */
async function step(fetch: FetchLike, continueUrl: string, fields: Record<string, string>) {
  const page = await (await fetch(continueUrl)).text();
  const token = /name="form_token" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const id = decodeURIComponent(new URL(continueUrl).pathname.split('/').pop() ?? '');
  const res = await fetch(continueUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(continueUrl).origin,
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({ session_id: id, form_token: token, ...fields }).toString(),
  });
  return statusOf(await res.text());
}

/** The guest confirms on `continueUrl`: a code mailed to `email`, read from `mailbox`, typed back. Each step printed. */
export async function confirmOnGuestPage(
  fetch: FetchLike,
  mailbox: DevMailbox,
  continueUrl: string,
  email: string,
  out: (line: string) => void,
): Promise<void> {
  out(`  → the guest opens ${continueUrl}`);
  const before = mailbox.received.length;
  const sent = await step(fetch, continueUrl, { step: 'send_code' });
  if (sent.refusal) throw new Error(`the guest page refused to send a code: ${sent.refusal}`);
  const code = await mailbox.code(email, before);
  out(`  ✓ the host's page mailed a one-time code to ${email} (read from the local SMTP server at ${mailbox.url})`);
  const confirmed = await step(fetch, continueUrl, { step: 'confirm', code });
  if (confirmed.refusal) throw new Error(`the guest page refused the code: ${confirmed.refusal}`);
  out(`  ✓ the guest confirmed with the code: the session is ${confirmed.status}, the host holds the dates`);
}
