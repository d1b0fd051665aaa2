/**
 * `vrp node serve --acme`: the node obtains and renews the certificate for its canonical domain
 * itself, from an ACME CA (RFC 8555; Let's Encrypt by default) with the HTTP-01 challenge
 * (RFC 8555 §8.3) answered on a plain-http listener (port 80 in production).
 *
 * The certificate, its key and the ACME account key live under `<dataDir>/tls/acme/`, mode 0600,
 * and are reused across restarts while the certificate has more than a third of its lifetime
 * left. Renewal runs at two thirds of the lifetime (the schedule Let's Encrypt recommends) while
 * the node keeps serving: the new certificate replaces the old one in the running server (its
 * secure context), no restart. A renewal that fails is reported loudly, counted, and retried;
 * the node keeps serving the certificate it has until it is replaced.
 */
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Agent } from 'node:https';
import { join } from 'node:path';
import * as acme from 'acme-client';
import { NodeError } from './errors.js';
import { checkServingCertificate, type PemKeyPair } from './tls.js';

/** Let's Encrypt's production directory, the default CA. */
export const DEFAULT_ACME_DIRECTORY = acme.directory.letsencrypt.production;
/** Where RFC 8555 §8.3 makes the CA look for an HTTP-01 key authorization. */
const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
/** A timer longer than this is re-armed in steps (setTimeout's limit is about 24.8 days). */
const MAX_TIMER_MS = 86_400_000;

export interface AcmeOptions {
  /** Contact address for the ACME account (expiry and policy mail from the CA). */
  email: string;
  /** The CA's directory URL (default: Let's Encrypt production). */
  directoryUrl?: string;
  /** Port of the HTTP-01 listener; the CA always connects to port 80, so a port other than 80 needs a forward to it. Default 80. */
  httpPort?: number;
  /** Extra trusted CA certificate (PEM) for the ACME directory's https (a private ACME CA, or a test CA). */
  directoryCa?: string;
}

/** Counters an operator reads to see that renewal works (and a failed one that needs attention). */
export interface AcmeStatus {
  not_after: string;
  renewals: number;
  renewal_failures: number;
  last_error: string | null;
}

export interface AcmeCertificates {
  /** The certificate and key to serve now. */
  current: PemKeyPair;
  status(): AcmeStatus;
  /** Called with every renewed certificate (the server swaps its secure context). */
  onRenewed(swap: (pair: PemKeyPair) => void): void;
  close(): Promise<void>;
}

function writePrivate(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** When a certificate should be renewed: two thirds into its lifetime. */
function renewalTime(certPem: string): number {
  const cert = new X509Certificate(certPem);
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  return from + ((to - from) * 2) / 3;
}

/** The HTTP-01 responder: key authorizations for pending challenges; everything else goes to the https origin. */
function challengeListener(tokens: Map<string, string>, domain: string, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.startsWith(CHALLENGE_PREFIX)) {
      const keyAuthorization = tokens.get(path.slice(CHALLENGE_PREFIX.length));
      res.writeHead(keyAuthorization ? 200 : 404, { 'content-type': 'text/plain' }).end(keyAuthorization ?? 'no such challenge');
      return;
    }
    res.writeHead(308, { location: `https://${domain}${path.startsWith('/') ? path : '/'}` }).end();
  });
  return new Promise((listening, fail) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      fail(
        new NodeError(
          'listen_failed',
          { address: `${host}:${port} for ACME HTTP-01`, reason: e.code ?? e.message },
          { details: { host, port } },
        ),
      ),
    );
    server.listen(port, host, () => listening(server));
  });
}

type AcmeStartOptions = AcmeOptions & { tlsDir: string; domain: string; host: string; onError: (e: unknown) => void };
interface AcmeFiles {
  account: string;
  cert: string;
  key: string;
}

/** The ACME account (its key made once, 0600) and the client of the CA's directory. */
async function acmeClient(o: AcmeStartOptions, files: AcmeFiles): Promise<acme.Client> {
  if (!existsSync(files.account)) writePrivate(files.account, (await acme.crypto.createPrivateEcdsaKey()).toString());
  // Only the ACME client's own requests trust the extra CA; axios is acme-client's HTTP client.
  if (o.directoryCa) acme.axios.defaults.httpsAgent = new Agent({ ca: o.directoryCa });
  return new acme.Client({
    directoryUrl: o.directoryUrl ?? DEFAULT_ACME_DIRECTORY,
    accountKey: readFileSync(files.account),
    backoffAttempts: 5,
  });
}

/** Obtain a certificate for `domain` (RFC 8555 with HTTP-01 answered from `tokens`), checked, and stored 0600. */
function obtainer(client: acme.Client, o: AcmeStartOptions, files: AcmeFiles, tokens: Map<string, string>): () => Promise<PemKeyPair> {
  return async () => {
    const [key, csr] = await acme.crypto.createCsr(
      { commonName: o.domain, altNames: [o.domain] },
      await acme.crypto.createPrivateEcdsaKey(),
    );
    const certPem = await client.auto({
      csr,
      email: o.email,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // The CA checks the challenge itself; a self-check would assume the listener is on port 80 of the domain.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        tokens.set(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        tokens.delete(challenge.token);
      },
    });
    const pair = { certPem, keyPem: key.toString() };
    checkServingCertificate(pair, o.domain, { cert: 'the ACME certificate', key: 'its key' });
    writePrivate(files.key, pair.keyPem);
    writePrivate(files.cert, pair.certPem);
    return pair;
  };
}

/** The stored certificate while it names the domain and is not due for renewal, else a new one. */
async function firstCertificate(files: AcmeFiles, domain: string, obtain: () => Promise<PemKeyPair>): Promise<PemKeyPair> {
  const stored =
    existsSync(files.cert) && existsSync(files.key)
      ? { certPem: readFileSync(files.cert, 'utf8'), keyPem: readFileSync(files.key, 'utf8') }
      : null;
  const usable = stored && new X509Certificate(stored.certPem).checkHost(domain) !== undefined && renewalTime(stored.certPem) > Date.now();
  return usable ? stored : obtain();
}

/** Renewal at two thirds of the certificate's life; a failure is reported and retried well before expiry. */
class Renewals {
  readonly status = { renewals: 0, renewal_failures: 0, last_error: null as string | null };
  readonly swaps: Array<(pair: PemKeyPair) => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    public current: PemKeyPair,
    private readonly obtain: () => Promise<PemKeyPair>,
    private readonly o: AcmeStartOptions,
  ) {
    this.schedule(renewalTime(current.certPem));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(at: number): void {
    if (this.closed) return;
    const wait = Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS);
    this.timer = setTimeout(() => (Date.now() >= at ? void this.renew() : this.schedule(at)), wait);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    const { status } = this;
    try {
      const pair = await this.obtain();
      if (this.closed) return;
      this.current = pair;
      status.renewals++;
      status.last_error = null;
      for (const swap of this.swaps) swap(pair);
      this.schedule(renewalTime(pair.certPem));
    } catch (e) {
      if (this.closed) return;
      status.renewal_failures++;
      status.last_error = e instanceof Error ? e.message : String(e);
      const validTo = new X509Certificate(this.current.certPem).validTo;
      const failed = { domain: this.o.domain, failures: status.renewal_failures, reason: status.last_error, validTo };
      this.o.onError(new NodeError('acme_renewal_failed', failed));
      // Retry well before expiry: a tenth of the time left, at least a second, at most an hour.
      const left = Date.parse(validTo) - Date.now();
      this.schedule(Date.now() + Math.min(Math.max(left / 10, 1_000), 3_600_000));
    }
  }
}

/**
 * Start certificate management for `domain`: answer HTTP-01 challenges on `host:httpPort`, reuse
 * the stored certificate or obtain one, and schedule renewals. Rejects (nothing served) when no
 * certificate can be had at start; later failures only log through `onError` and count.
 */
export async function startAcme(o: AcmeStartOptions): Promise<AcmeCertificates> {
  const dir = join(o.tlsDir, 'acme');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = { account: join(dir, 'account-key.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  const client = await acmeClient(o, files);
  const tokens = new Map<string, string>();
  const listener = await challengeListener(tokens, o.domain, o.host, o.httpPort ?? 80);
  const obtain = obtainer(client, o, files, tokens);
  let first: PemKeyPair;
  try {
    first = await firstCertificate(files, o.domain, obtain);
  } catch (e) {
    await new Promise<void>((done) => listener.close(() => done()));
    if (e instanceof NodeError) throw e;
    throw new NodeError('acme_failed', { domain: o.domain, reason: e instanceof Error ? e.message : String(e) });
  }
  const renewals = new Renewals(first, obtain, o);
  return {
    get current() {
      return renewals.current;
    },
    status: () => ({ not_after: new Date(new X509Certificate(renewals.current.certPem).validTo).toISOString(), ...renewals.status }),
    onRenewed: (swap) => renewals.swaps.push(swap),
    close() {
      renewals.close();
      return new Promise<void>((done) => listener.close(() => done()));
    },
  };
}
