/**
 * A real HTTPS checkout site on 127.0.0.1 served under two host names, and real Chromium driven
 * by playwright-core, for the computer-use scenario (T-E). Chromium reaches the names through
 * `--host-resolver-rules` and trusts exactly this test's key (`--ignore-certificate-errors-spki-list`).
 */
import 'reflect-metadata';
import { createHash, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import type { LiveBrowserState } from '@vrpkit/gate';
import { launchChromium as launchTestChromium } from '@vrpkit/testkit/browser';
import type { Browser, Page } from 'playwright-core';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface CheckoutSite {
  port: number;
  spkiHash: string;
  /** POSTs of the payment form received, per Host header, with their form bodies. */
  readonly payments: Array<{ host: string; body: string }>;
  close(): Promise<void>;
}

const PAGE = `<!doctype html><title>Checkout</title>
<form method="post" action="/pay" style="margin:0">
  <input name="amount" value="150.00"><input name="beneficiary" value="vendor-441">
  <button id="pay" type="submit" style="position:absolute;left:100px;top:200px;width:120px;height:40px">Pay</button>
</form>`;

export async function startCheckoutSite(hostnames: string[]): Promise<CheckoutSite> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${hostnames[0]}`,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: alg,
    keys,
    extensions: [new x509.SubjectAlternativeNameExtension(hostnames.map((value) => ({ type: 'dns' as const, value })))],
  });
  const spki = await webcrypto.subtle.exportKey('spki', keys.publicKey);
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  const payments: Array<{ host: string; body: string }> = [];
  const server: Server = createServer({ cert: cert.toString('pem'), key: keyPem }, async (req, res) => {
    if (req.method === 'POST' && req.url === '/pay') {
      let body = '';
      for await (const c of req) body += c;
      payments.push({ host: req.headers.host ?? '', body });
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>paid</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    spkiHash: createHash('sha256').update(Buffer.from(spki)).digest('base64'),
    payments,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The test Chromium, reaching `hostnames` on the site's port and trusting exactly the site's key. */
export function launchChromium(site: CheckoutSite, hostnames: string[]): Promise<Browser> {
  return launchTestChromium([
    `--host-resolver-rules=${hostnames.map((h) => `MAP ${h} 127.0.0.1:${site.port}`).join(', ')}`,
    `--ignore-certificate-errors-spki-list=${site.spkiHash}`,
  ]);
}

/**
 * The computer-use controller's read of the live page right before an action: the page URL
 * and, when the click lands on a submit button, the form it would post (action URL + fields).
 */
export async function readLiveState(page: Page, input: unknown): Promise<LiveBrowserState> {
  const [x, y] = ((input as { coordinate?: [number, number] }).coordinate ?? [-1, -1]) as [number, number];
  const form = await page.evaluate(
    ([px, py]) => {
      const el = document.elementFromPoint(px, py);
      const button = el?.closest('button[type=submit], input[type=submit]') as HTMLButtonElement | null;
      if (!button?.form) return null;
      const fields: Record<string, string> = {};
      for (const [k, v] of new FormData(button.form)) fields[k] = typeof v === 'string' ? v : `file:${v.name}`;
      return { action_url: button.form.action, fields };
    },
    [x, y] as const,
  );
  return form ? { url: page.url(), form } : { url: page.url() };
}
