/**
 * Per-domain TLS for platform mode, chosen by SNI (RFC 6066 §3) at each handshake:
 *
 * - `--tls-dir DIR`: `DOMAIN.pem` + `DOMAIN.key`, or a wildcard pair `_wildcard.PARENT.pem` +
 *   `_wildcard.PARENT.key` (mkcert's naming) covering one label under PARENT. Files are re-read
 *   when their modification time changes, so a renewed or new certificate is served without a
 *   restart, from the first handshake after the directory's next check (`TLS_DIR_CHECK_MS`).
 * - `--dev`: a certificate per served domain issued from the local dev CA (`ca.pem` under the
 *   dev directory), in memory.
 *
 * A name with no certificate gets none: the handshake fails, so one tenant's certificate is
 * never presented for another name.
 */
import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { createDevIssuer, dnsNamePattern, ensureDevCa, type PemKeyPair } from '@vrpkit/node';
import { LRUCache } from 'lru-cache';

/** The name of the CA `--dev` issues tenant certificates from. */
export const DEV_CA_NAME = 'vrpkit platform dev CA';

export type CertificateSource = { kind: 'dir'; dir: string } | { kind: 'dev'; dir: string };

/** SNI names this long or with characters outside a DNS name are refused before any file lookup. */
const SNI_NAME = dnsNamePattern('{1,253}');

export interface CertificateStore {
  /** The secure context for an SNI name, or undefined when no certificate covers it. */
  contextFor(servername: string): Promise<SecureContext | undefined>;
  /** TLS contexts held now. */
  held(): number;
  /** TLS contexts created so far: a name whose context was evicted pays one more at its next handshake. */
  created(): number;
  /** The dev CA certificate file (`--dev`), for clients to trust. */
  caFile?: string;
  caPem?: string;
}

/**
 * Default bound on the TLS contexts held. A context is an OpenSSL `SSL_CTX` with its parsed
 * certificate and key: about 30 KB of native memory, plus what the key's first signature adds,
 * whatever the certificate. It is needed only while a handshake picks its certificate (Node
 * copies the certificate and key into the connection), and an agent keeps its connection to a
 * name for the keep-alive, so names handshake far less often than they send requests: 100 hot
 * names keep their context, and a name past them pays one `createSecureContext` at its next
 * handshake (1.5–2 ms more server CPU for that handshake on the loaded bench machine, about
 * doubling it: bench/platform `revisit_cpu_ms_per_handshake`). With a certificate per name this bound, not the
 * tenant cache, is what TLS memory follows (about 3 MB); names under one wildcard share one.
 */
export const DEFAULT_TLS_CONTEXT_CACHE_SIZE = 100;

/**
 * How often (ms) `--tls-dir` is looked at again: its listing, and the modification times of a
 * pair in use. Looked at per handshake, a name with no files of its own (every name under a
 * wildcard) cost four `stat` calls, each a system call on a cold tenant's first connection
 * (bench/platform first visits); a new or renewed certificate is served within this much.
 */
export const TLS_DIR_CHECK_MS = 1000;

export interface CertificateStoreBounds {
  /** Most TLS contexts held (default `DEFAULT_TLS_CONTEXT_CACHE_SIZE`). */
  contexts?: number;
  /** `--dev`: most issued certificates kept (PEM, about 1 KB each) so a context is rebuilt without issuing again (default 1,000). */
  issued?: number;
}

/** `served(name)`: whether a tenant serves `name`; the dev CA issues for served names only. */
export async function openCertificateStore(
  source: CertificateSource,
  served: (name: string) => Promise<boolean>,
  bounds: CertificateStoreBounds = {},
): Promise<CertificateStore> {
  let created = 0;
  const build = (pair: PemKeyPair): SecureContext => {
    created++;
    return createSecureContext({ cert: pair.certPem, key: pair.keyPem });
  };
  const contextBound = bounds.contexts ?? DEFAULT_TLS_CONTEXT_CACHE_SIZE;
  if (source.kind === 'dev') {
    const { ca, caFile } = await ensureDevCa(source.dir, DEV_CA_NAME);
    const issue = await createDevIssuer(ca);
    // Two bounds: the issued pairs are small (their key text shared, createDevIssuer) and cost a
    // signature to remake, the contexts large and cheap to rebuild from them.
    const issued = new LRUCache<string, Promise<PemKeyPair>>({ max: bounds.issued ?? 1000 });
    const contexts = new LRUCache<string, Promise<SecureContext>>({ max: contextBound });
    return {
      caFile,
      caPem: ca.certPem,
      held: () => contexts.size,
      created: () => created,
      async contextFor(name) {
        if (!SNI_NAME.test(name)) return undefined;
        let ctx = contexts.get(name);
        if (!ctx) {
          let pair = issued.get(name);
          if (!pair) {
            if (!(await served(name))) return undefined;
            const issuing = issue([name]);
            issued.set(name, issuing);
            issuing.catch(() => issued.delete(name));
            pair = issuing;
          }
          ctx = pair.then(build);
          contexts.set(name, ctx);
          ctx.catch(() => contexts.delete(name));
        }
        return ctx;
      },
    };
  }
  const loaded = new LRUCache<string, { mtimeMs: number; checkedAt: number; ctx: SecureContext }>({ max: contextBound });
  let listing: { at: number; files: Set<string> } | undefined;
  /** Whether the directory holds `file`, as of its listing at most `TLS_DIR_CHECK_MS` old. */
  const holds = (file: string, now: number): boolean => {
    if (!listing || now - listing.at >= TLS_DIR_CHECK_MS) {
      let files: string[] = [];
      try {
        files = readdirSync(source.dir);
      } catch {
        // A directory gone (or not readable) serves no certificate until it is back.
      }
      listing = { at: now, files: new Set(files) };
    }
    return listing.files.has(file);
  };
  const pairFor = async (base: string): Promise<SecureContext | undefined> => {
    const now = performance.now();
    if (!holds(`${base}.pem`, now) || !holds(`${base}.key`, now)) return undefined;
    const hit = loaded.get(base);
    if (hit && now - hit.checkedAt < TLS_DIR_CHECK_MS) return hit.ctx;
    const certFile = join(source.dir, `${base}.pem`);
    const keyFile = join(source.dir, `${base}.key`);
    const cs = statSync(certFile, { throwIfNoEntry: false });
    const ks = statSync(keyFile, { throwIfNoEntry: false });
    if (!cs || !ks) return undefined;
    const mtimeMs = Math.max(cs.mtimeMs, ks.mtimeMs);
    if (hit && hit.mtimeMs === mtimeMs) {
      hit.checkedAt = now;
      return hit.ctx;
    }
    const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    const ctx = build({ certPem, keyPem });
    loaded.set(base, { mtimeMs, checkedAt: now, ctx });
    return ctx;
  };
  return {
    held: () => loaded.size,
    created: () => created,
    async contextFor(name) {
      if (!SNI_NAME.test(name)) return undefined;
      const exact = await pairFor(name);
      if (exact) return exact;
      const dot = name.indexOf('.');
      return name.indexOf('.', dot + 1) > 0 ? pairFor(`_wildcard.${name.slice(dot + 1)}`) : undefined;
    },
  };
}
