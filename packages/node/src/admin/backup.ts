/**
 * `vrp node backup` / `vrp node restore`: one encrypted file holding a consistent online snapshot
 * of the SQLite store (SQLite's online backup API, through better-sqlite3's `backup()`, safe while
 * the node serves) and the node's key material (`node.json`, `keys/`, `tls/`).
 *
 * The file is `MAGIC ‖ u32 header length ‖ header JSON ‖ AES-256-GCM ciphertext ‖ 16-byte tag`;
 * the key comes from the passphrase through scrypt (RFC 7914) with the header's salt and cost,
 * and the header is the GCM additional data, so a changed cost, salt or nonce fails
 * authentication like a changed byte of ciphertext (NIST SP 800-38D). A wrong passphrase and a
 * tampered file are the same error, and restore writes nothing before authentication succeeded.
 *
 * A PostgreSQL store is not copied: its database is `pg_dump`'s job; the backup still holds the
 * private keys and `node.json`, which live only in the data directory.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { systemClock } from '@vrpkit/core';
import Database from 'better-sqlite3';
import { assertDataDirNotFile, nodePaths, readNodeConfig } from '../datadir.js';
import { NodeError } from '../errors.js';
import type { NodeStoreOptions } from './store.js';

/** Environment variable a backup passphrase may come from (instead of a file). */
export const BACKUP_PASSPHRASE_ENV = 'VRPKIT_BACKUP_PASSPHRASE';

const MAGIC = Buffer.from('VRPKBAK1', 'ascii');
const FORMAT = 'vrpkit-node-backup/1';
/** scrypt cost: N = 2^17, r = 8, p = 1 (about 128 MiB and a fraction of a second, OWASP's current minimum). */
const SCRYPT = { N: 2 ** 17, r: 8, p: 1 } as const;
const TAG_BYTES = 16;
/** Paths a backup may hold; anything else in an archive is refused (no `..`, no absolute paths). */
const ARCHIVE_PATH = /^(?:node\.json|node\.sqlite|keys\/[A-Za-z0-9._-]+|tls\/[A-Za-z0-9._-]+)$/;

interface BackupHeader {
  format: typeof FORMAT;
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string };
  cipher: { name: 'aes-256-gcm'; iv: string };
}

interface ArchiveFile {
  path: string;
  mode: number;
  data: string;
}

interface Archive {
  format: typeof FORMAT;
  created_at: string;
  canonical_domain: string;
  store: 'sqlite' | 'postgres';
  files: ArchiveFile[];
}

export interface BackupNodeOptions extends NodeStoreOptions {
  out: string;
  passphrase: string;
}

export interface BackupNodeResult {
  out: string;
  canonical_domain: string;
  store: 'sqlite' | 'postgres';
  files: string[];
  /** Set for a PostgreSQL store: what the backup does not hold. */
  note?: string;
}

function assertPassphrase(passphrase: string): void {
  if (passphrase.length === 0) throw new NodeError('passphrase_required', { env: BACKUP_PASSPHRASE_ENV });
}

function deriveKey(passphrase: string, kdf: BackupHeader['kdf']): Buffer {
  return scryptSync(passphrase, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * 1024 * 1024 });
}

function readDirFiles(dir: string, prefix: string): ArchiveFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile() && !name.includes('.tmp-'))
    .sort()
    .map((name) => ({
      path: `${prefix}/${name}`,
      mode: statSync(join(dir, name)).mode & 0o777,
      data: readFileSync(join(dir, name)).toString('base64'),
    }));
}

/** Kids the snapshot says may still sign (active or pending): the backup must hold their private files. */
function signingKids(snapshotFile: string, now: number): string[] {
  const db = new Database(snapshotFile, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT kid, retired_at FROM signing_key WHERE status <> 'revoked'").all() as Array<{
      kid: string;
      retired_at: string | null;
    }>;
    return rows.filter((r) => r.retired_at === null || Date.parse(r.retired_at) > now).map((r) => r.kid);
  } finally {
    db.close();
  }
}

/** Snapshot the store and read the key files; retried when a key rotation ran in between (the two then disagree). */
async function collectArchiveFiles(dataDir: string, store: 'sqlite' | 'postgres', now: number): Promise<ArchiveFile[]> {
  const paths = nodePaths(dataDir);
  const base = [{ path: 'node.json', mode: 0o644, data: readFileSync(paths.config).toString('base64') }];
  if (store === 'postgres') return [...base, ...readDirFiles(paths.keys, 'keys'), ...readDirFiles(paths.tls, 'tls')];
  const work = mkdtempSync(join(tmpdir(), 'vrpkit-backup-'));
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const snapshot = join(work, `snapshot-${attempt}.sqlite`);
      const db = new Database(paths.sqlite, { readonly: true, fileMustExist: true });
      try {
        await db.backup(snapshot);
      } finally {
        db.close();
      }
      const keys = readDirFiles(paths.keys, 'keys');
      const held = new Set(keys.map((k) => k.path));
      if (signingKids(snapshot, now).every((kid) => held.has(`keys/${kid}.jwk`))) {
        return [
          ...base,
          { path: 'node.sqlite', mode: 0o600, data: readFileSync(snapshot).toString('base64') },
          ...keys,
          ...readDirFiles(paths.tls, 'tls'),
        ];
      }
    }
    throw new NodeError('backup_inconsistent');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Write one encrypted backup of the node in `o.dataDir` to `o.out` (mode 0600, replaced atomically). */
export async function backupNode(o: BackupNodeOptions): Promise<BackupNodeResult> {
  assertPassphrase(o.passphrase);
  const now = (o.clock ?? systemClock).now();
  const cfg = readNodeConfig(o.dataDir);
  const archive: Archive = {
    format: FORMAT,
    created_at: new Date(now).toISOString(),
    canonical_domain: cfg.canonical_domain,
    store: cfg.store,
    files: await collectArchiveFiles(o.dataDir, cfg.store, now),
  };
  const header: BackupHeader = {
    format: FORMAT,
    kdf: { name: 'scrypt', ...SCRYPT, salt: randomBytes(16).toString('base64') },
    cipher: { name: 'aes-256-gcm', iv: randomBytes(12).toString('base64') },
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const cipher = createCipheriv('aes-256-gcm', deriveKey(o.passphrase, header.kdf), Buffer.from(header.cipher.iv, 'base64'));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(headerBytes.length);
  cipher.setAAD(Buffer.concat([MAGIC, length, headerBytes]));
  const body = Buffer.concat([cipher.update(JSON.stringify(archive), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const out = resolve(o.out);
  const tmp = `${out}.tmp-${process.pid}`;
  writeFileSync(tmp, Buffer.concat([MAGIC, length, headerBytes, body]), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, out);
  return {
    out,
    canonical_domain: cfg.canonical_domain,
    store: cfg.store,
    files: archive.files.map((f) => f.path),
    ...(cfg.store === 'postgres'
      ? { note: 'the PostgreSQL store is not in this backup: back it up with pg_dump (the keys and node.json are here)' }
      : {}),
  };
}

/** Authenticate and decrypt a backup file; any failure is `backup_invalid` or `backup_unauthenticated`, before anything is written. */
function openBackup(file: string, passphrase: string): Archive {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (cause) {
    throw new NodeError('backup_unreadable', { file, reason: (cause as NodeJS.ErrnoException).code ?? 'error' });
  }
  const invalid = () => new NodeError('backup_invalid', { file });
  if (bytes.length < MAGIC.length + 4 || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw invalid();
  const headerEnd = MAGIC.length + 4 + bytes.readUInt32BE(MAGIC.length);
  if (headerEnd + TAG_BYTES > bytes.length) throw invalid();
  let header: BackupHeader;
  try {
    header = JSON.parse(bytes.subarray(MAGIC.length + 4, headerEnd).toString('utf8')) as BackupHeader;
  } catch {
    throw invalid();
  }
  const { kdf, cipher } = header ?? {};
  // Bound the cost a file may ask for, so a crafted header cannot make restore allocate gigabytes.
  if (
    header?.format !== FORMAT ||
    kdf?.name !== 'scrypt' ||
    cipher?.name !== 'aes-256-gcm' ||
    ![2 ** 14, 2 ** 15, 2 ** 16, 2 ** 17].includes(kdf.N) ||
    kdf.r !== 8 ||
    kdf.p !== 1
  )
    throw invalid();
  const decipher = createDecipheriv('aes-256-gcm', deriveKey(passphrase, kdf), Buffer.from(cipher.iv, 'base64'));
  decipher.setAAD(bytes.subarray(0, headerEnd));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(bytes.subarray(headerEnd, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new NodeError('backup_unauthenticated', { file });
  }
  const archive = JSON.parse(plain.toString('utf8')) as Archive;
  if (archive.format !== FORMAT || !Array.isArray(archive.files) || archive.files.some((f) => !ARCHIVE_PATH.test(f.path))) throw invalid();
  return archive;
}

export interface RestoreNodeOptions {
  in: string;
  dataDir: string;
  passphrase: string;
}

export interface RestoreNodeResult {
  data_dir: string;
  canonical_domain: string;
  store: 'sqlite' | 'postgres';
  created_at: string;
  note?: string;
}

/**
 * Restore a backup into a new data directory (one that does not exist or is empty), atomically:
 * everything is written to a temporary sibling and renamed into place at the end.
 */
export function restoreNode(o: RestoreNodeOptions): RestoreNodeResult {
  assertPassphrase(o.passphrase);
  const dataDir = resolve(o.dataDir);
  assertDataDirNotFile(o.dataDir);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) throw new NodeError('data_dir_not_empty', { dir: o.dataDir });
  const archive = openBackup(o.in, o.passphrase);
  const tmp = join(dirname(dataDir), `.${basename(dataDir)}.restore-${randomBytes(6).toString('hex')}`);
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  try {
    for (const f of archive.files) {
      const target = join(tmp, f.path);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      writeFileSync(target, Buffer.from(f.data, 'base64'), { mode: f.mode & 0o777 });
      chmodSync(target, f.mode & 0o777);
    }
    if (existsSync(dataDir)) rmdirSync(dataDir);
    renameSync(tmp, dataDir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return {
    data_dir: dataDir,
    canonical_domain: archive.canonical_domain,
    store: archive.store,
    created_at: archive.created_at,
    ...(archive.store === 'postgres' ? { note: 'restore the PostgreSQL store with pg_restore / psql from its pg_dump' } : {}),
  };
}
