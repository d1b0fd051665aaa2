/**
 * Dev TLS (dev equals production except for the CA): a local CA generated once and a server
 * certificate for the node's domain and its subdomains, made with @peculiar/x509. Clients
 * reach the node like curl `--connect-to DOMAIN:443:127.0.0.1:PORT --cacert <dataDir>/tls/ca.pem`.
 */
import 'reflect-metadata';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { NodeError } from './errors.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface PemKeyPair {
  certPem: string;
  keyPem: string;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** A fresh local certificate authority (ECDSA P-256), for dev servers and tests. */
export async function createDevCa(opts: { commonName?: string; validDays?: number; now?: number } = {}): Promise<PemKeyPair> {
  const now = opts.now ?? Date.now();
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${opts.commonName ?? 'vrpkit dev CA'}, O=vrpkit development (not trusted outside this machine)`,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + (opts.validDays ?? 3650) * DAY_MS),
    signingAlgorithm: SIGN_ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

/** A server certificate for `hostnames` (DNS SANs, wildcards allowed; IPv4 literals become IP SANs) signed by `ca`. */
export async function issueServerCertificate(
  ca: PemKeyPair,
  hostnames: string[],
  opts: { validDays?: number; now?: number } = {},
): Promise<PemKeyPair> {
  const issuer = await openIssuer(ca);
  const keys = await newKeys();
  return { certPem: await issuer.sign(await subjectKey(keys.publicKey), hostnames, opts), keyPem: await keyPem(keys.privateKey) };
}

/** A leaf's public key with its subject key identifier (RFC 5280 §4.2.1.2), computed once per key. */
async function subjectKey(publicKey: CryptoKey) {
  return { publicKey, ski: await x509.SubjectKeyIdentifierExtension.create(publicKey) };
}

/** The CA as parsed once: its certificate and signing key, and a `sign` for leaf certificates. */
async function openIssuer(ca: PemKeyPair) {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.keyPem), KEY_ALG, false, ['sign']);
  const aki = await x509.AuthorityKeyIdentifierExtension.create(caCert);
  return {
    /** A server certificate (PEM) for `subject`'s public key naming `hostnames`. */
    async sign(
      subject: Awaited<ReturnType<typeof subjectKey>>,
      hostnames: string[],
      opts: { validDays?: number; now?: number } = {},
    ): Promise<string> {
      const now = opts.now ?? Date.now();
      const cert = await x509.X509CertificateGenerator.create({
        subject: `CN=${hostnames[0]}`,
        issuer: caCert.subject,
        notBefore: new Date(now - DAY_MS),
        notAfter: new Date(now + (opts.validDays ?? 825) * DAY_MS),
        signingAlgorithm: SIGN_ALG,
        publicKey: subject.publicKey,
        signingKey: caKey as CryptoKey,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension(
            hostnames.map((value) => ({ type: isIPv4(value) ? ('ip' as const) : ('dns' as const), value })),
          ),
          aki,
          subject.ski,
        ],
      });
      return cert.toString('pem');
    },
  };
}

/**
 * Issue many dev server certificates from `ca` (platform mode's `--dev`: one per tenant name, in
 * memory): the CA key is imported once, and every certificate is for one key pair made once per
 * issuer, so an issue is one signature and the kept pairs share their key text. Each name still
 * gets its own certificate, naming it alone; the key is as private as the dev CA's own, which
 * sits beside it. Issuing a key pair and importing the CA key per certificate left some 20 KB of
 * native memory per name in the allocator (bench/platform).
 */
export async function createDevIssuer(ca: PemKeyPair): Promise<(hostnames: string[]) => Promise<PemKeyPair>> {
  const issuer = await openIssuer(ca);
  const keys = await newKeys();
  const subject = await subjectKey(keys.publicKey);
  const sharedKeyPem = await keyPem(keys.privateKey);
  return async (hostnames) => ({ certPem: await issuer.sign(subject, hostnames), keyPem: sharedKeyPem });
}

function writeAtomic(file: string, text: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}

function coversDomain(certPem: string, domain: string, now: number): boolean {
  const cert = new x509.X509Certificate(certPem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.items.map((n) => n.value) ?? [];
  return names.includes(domain) && names.includes(`*.${domain}`) && cert.notAfter.getTime() > now + DAY_MS;
}

export interface DevTls {
  caFile: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

/**
 * The dev TLS material of a node, created on first use under `<dataDir>/tls/` and reused
 * afterwards (the CA stays stable so a client that trusts `ca.pem` keeps trusting it).
 * TLS validity always follows the real clock, never an injected one.
 */
export async function ensureDevTls(tlsDir: string, domain: string): Promise<DevTls> {
  const { ca, caFile } = await ensureDevCa(tlsDir, `vrpkit dev CA for ${domain}`);
  const f = { cert: join(tlsDir, 'server.pem'), key: join(tlsDir, 'server-key.pem') };
  if (!(existsSync(f.cert) && existsSync(f.key) && coversDomain(readFileSync(f.cert, 'utf8'), domain, Date.now()))) {
    const server = await issueServerCertificate(ca, [domain, `*.${domain}`]);
    writeAtomic(f.key, server.keyPem, 0o600);
    writeAtomic(f.cert, server.certPem, 0o644);
  }
  return { caFile, caPem: ca.certPem, certPem: readFileSync(f.cert, 'utf8'), keyPem: readFileSync(f.key, 'utf8') };
}

/**
 * The dev CA under `tlsDir` (`ca.pem`, `ca-key.pem`), created on first use and reused afterwards;
 * platform mode (`vrp platform serve --dev`) issues each tenant's certificate from it.
 */
export async function ensureDevCa(tlsDir: string, commonName: string): Promise<{ ca: PemKeyPair; caFile: string }> {
  mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
  const caFile = join(tlsDir, 'ca.pem');
  const caKeyFile = join(tlsDir, 'ca-key.pem');
  if (existsSync(caFile) && existsSync(caKeyFile))
    return { ca: { certPem: readFileSync(caFile, 'utf8'), keyPem: readFileSync(caKeyFile, 'utf8') }, caFile };
  const ca = await createDevCa({ commonName });
  writeAtomic(caKeyFile, ca.keyPem, 0o600);
  writeAtomic(caFile, ca.certPem, 0o644);
  return { ca, caFile };
}

/**
 * Refuse a certificate and key a node cannot serve its domain with, before listening, with a code
 * that names the file and the reason: not PEM, a key that is not the certificate's (OpenSSL would
 * only say "key values mismatch"), or a certificate whose subjectAltName does not cover the
 * canonical domain (every client would then fail the hostname check, RFC 9110 §4.3.4).
 */
export function checkServingCertificate(pair: PemKeyPair, domain: string, files: { cert: string; key: string }): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pair.certPem);
  } catch {
    throw new NodeError('tls_invalid', { file: files.cert, what: 'certificate' });
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(pair.keyPem);
  } catch {
    throw new NodeError('tls_invalid', { file: files.key, what: 'private key' });
  }
  if (!cert.checkPrivateKey(key)) {
    throw new NodeError('tls_key_mismatch', { cert: files.cert, key: files.key });
  }
  if (cert.checkHost(domain) === undefined) {
    throw new NodeError('tls_wrong_domain', { file: files.cert, domain, names: cert.subjectAltName ?? cert.subject.replace(/\n/g, ', ') });
  }
}
