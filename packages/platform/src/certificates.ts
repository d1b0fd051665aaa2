/**
 * Per-domain TLS for platform mode, chosen by SNI (RFC 6066 §3) at each handshake:
 *
 * - `--tls-dir DIR`: `DOMAIN.pem` + `DOMAIN.key`, or a wildcard pair `_wildcard.PARENT.pem` +
 *   `_wildcard.PARENT.key` (mkcert's naming) covering one label under PARENT. Files are re-read
 *   when their modification time changes, so a renewed or new certificate is served from the next
 *   handshake on, without a restart.
 * - `--dev`: a certificate per served domain issued from the local dev CA (`ca.pem` under the
 *   dev directory), in memory.
 *
 * A name with no certificate gets none: the handshake fails, so one tenant's certificate is
 * never presented for another name.
 */
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { ensureDevCa, issueServerCertificate, type PemKeyPair } from '@vrpkit/node';
import { LRUCache } from 'lru-cache';

/** The name of the CA `--dev` issues tenant certificates from. */
export const DEV_CA_NAME = 'vrpkit platform dev CA';

export type CertificateSource = { kind: 'dir'; dir: string } | { kind: 'dev'; dir: string };

/** SNI names this long or with characters outside a DNS name are refused before any file lookup. */
const SNI_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

export interface CertificateStore {
  /** The secure context for an SNI name, or undefined when no certificate covers it. */
  contextFor(servername: string): Promise<SecureContext | undefined>;
  /** TLS contexts held now. */
  held(): number;
  /** The dev CA certificate file (`--dev`), for clients to trust. */
  caFile?: string;
  caPem?: string;
}

/** `served(name)`: whether a tenant serves `name`; the dev CA issues for served names only. */
export async function openCertificateStore(
  source: CertificateSource,
  served: (name: string) => Promise<boolean>,
  maxEntries = 10_000,
): Promise<CertificateStore> {
  if (source.kind === 'dev') {
    const { ca, caFile } = await ensureDevCa(source.dir, DEV_CA_NAME);
    const issued = new LRUCache<string, Promise<SecureContext>>({ max: maxEntries });
    return {
      caFile,
      caPem: ca.certPem,
      held: () => issued.size,
      async contextFor(name) {
        if (!SNI_NAME.test(name)) return undefined;
        let ctx = issued.get(name);
        if (!ctx) {
          if (!(await served(name))) return undefined;
          ctx = issueServerCertificate(ca, [name]).then((pair: PemKeyPair) =>
            createSecureContext({ cert: pair.certPem, key: pair.keyPem }),
          );
          issued.set(name, ctx);
        }
        return ctx;
      },
    };
  }
  const loaded = new LRUCache<string, { mtimeMs: number; ctx: SecureContext }>({ max: maxEntries });
  const pairFor = async (base: string): Promise<SecureContext | undefined> => {
    const certFile = join(source.dir, `${base}.pem`);
    const keyFile = join(source.dir, `${base}.key`);
    const cs = statSync(certFile, { throwIfNoEntry: false });
    const ks = statSync(keyFile, { throwIfNoEntry: false });
    if (!cs || !ks) return undefined;
    const mtimeMs = Math.max(cs.mtimeMs, ks.mtimeMs);
    const hit = loaded.get(base);
    if (hit && hit.mtimeMs === mtimeMs) return hit.ctx;
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    const ctx = createSecureContext({ cert, key });
    loaded.set(base, { mtimeMs, ctx });
    return ctx;
  };
  return {
    held: () => loaded.size,
    async contextFor(name) {
      if (!SNI_NAME.test(name)) return undefined;
      const exact = await pairFor(name);
      if (exact) return exact;
      const dot = name.indexOf('.');
      return name.indexOf('.', dot + 1) > 0 ? pairFor(`_wildcard.${name.slice(dot + 1)}`) : undefined;
    },
  };
}
