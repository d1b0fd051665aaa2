/**
 * The host console's passkeys and one-time enrollment links, kept in the node's data directory
 * (`<dataDir>/console/`, owner-only): `passkeys.json` holds each enrolled credential's id, public
 * key (COSE, base64url) and signature counter (WebAuthn Level 3 §6.1.1), never a private key;
 * `enrollments.json` holds the SHA-256 of each unused enrollment token with its expiry, never the
 * token itself. `vrp node console enroll` (another process) writes an enrollment; the serving
 * node consumes it when the passkey it enrolls is verified. Every write is a whole file written
 * under a temporary name and renamed into place, so a reader never sees half a file.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeError } from '../errors.js';

/** How long an enrollment link may be used (ms): long enough to open it on a phone, short enough to lose little if it leaks. */
export const ENROLLMENT_TTL_MS = 15 * 60_000;
/** At most this many enrollment links wait at once (the oldest is dropped). */
const MAX_ENROLLMENTS = 16;

/** One enrolled passkey as the relying party keeps it. */
export interface ConsolePasskey {
  /** The credential id (base64url), as the authenticator reports it. */
  id: string;
  /** The credential's COSE public key, base64url. */
  public_key: string;
  /** The signature counter last seen (a clone check, WebAuthn §6.1.1). */
  counter: number;
  transports: string[];
  created_at: string;
  last_used_at: string | null;
}

interface Enrollment {
  token_sha256: string;
  expires_at: string;
}

/**
 * Where a console keeps its passkeys and enrollment links (the port the passkey ceremonies of
 * webauthn.ts use): the node's files (`ConsoleCredentials`) or a platform's database. A store may
 * answer at once or later; every answer is awaited.
 */
export interface ConsolePasskeyStore {
  passkeys(): ConsolePasskey[] | Promise<ConsolePasskey[]>;
  passkey(id: string): ConsolePasskey | undefined | Promise<ConsolePasskey | undefined>;
  /** Whether `token` opens an unused, unexpired enrollment (nothing is consumed). */
  isEnrollment(token: string, now: number): boolean | Promise<boolean>;
  /** Use up the enrollment `token` opens and keep `passkey` under it; throws `console_enrollment_invalid` when it opens none. */
  enrollPasskey(token: string, passkey: ConsolePasskey, now: number): void | Promise<void>;
  /** Record a sign-in: the new counter and when (only for a passkey that is still enrolled). */
  recordUse(id: string, counter: number, now: number): void | Promise<void>;
}

/** The console's folder in a data directory. */
export function consoleDir(dataDir: string): string {
  return join(dataDir, 'console');
}

function readJson<T>(file: string, empty: T): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw e;
  }
}

function writeJson(file: string, value: unknown): void {
  const temp = `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

/** The passkeys and enrollment links of the console of the node in `dataDir`. */
export class ConsoleCredentials implements ConsolePasskeyStore {
  private readonly passkeysFile: string;
  private readonly enrollmentsFile: string;

  constructor(dataDir: string) {
    const dir = consoleDir(dataDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.passkeysFile = join(dir, 'passkeys.json');
    this.enrollmentsFile = join(dir, 'enrollments.json');
  }

  passkeys(): ConsolePasskey[] {
    return readJson<ConsolePasskey[]>(this.passkeysFile, []);
  }

  passkey(id: string): ConsolePasskey | undefined {
    return this.passkeys().find((p) => p.id === id);
  }

  removePasskey(id: string): boolean {
    const all = this.passkeys();
    const kept = all.filter((p) => p.id !== id);
    if (kept.length === all.length) return false;
    writeJson(this.passkeysFile, kept);
    return true;
  }

  addPasskey(p: ConsolePasskey): void {
    writeJson(this.passkeysFile, [...this.passkeys().filter((q) => q.id !== p.id), p]);
  }

  enrollPasskey(token: string, p: ConsolePasskey, now: number): void {
    this.consumeEnrollment(token, now);
    this.addPasskey(p);
  }

  recordUse(id: string, counter: number, now: number): void {
    const all = this.passkeys();
    const p = all.find((q) => q.id === id);
    if (!p) return;
    p.counter = counter;
    p.last_used_at = new Date(now).toISOString();
    writeJson(this.passkeysFile, all);
  }

  /** A new one-time enrollment token (returned once, kept only as its digest) and its expiry. */
  createEnrollment(now: number): { token: string; expiresAt: string } {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now + ENROLLMENT_TTL_MS).toISOString();
    const live = this.liveEnrollments(now).slice(-(MAX_ENROLLMENTS - 1));
    writeJson(this.enrollmentsFile, [...live, { token_sha256: digest(token), expires_at: expiresAt }]);
    return { token, expiresAt };
  }

  isEnrollment(token: string, now: number): boolean {
    return this.findEnrollment(token, now) !== undefined;
  }

  /** Use up the enrollment `token` opens; throws `console_enrollment_invalid` when it opens none. */
  consumeEnrollment(token: string, now: number): void {
    const found = this.findEnrollment(token, now);
    if (!found) throw new NodeError('console_enrollment_invalid');
    writeJson(
      this.enrollmentsFile,
      this.liveEnrollments(now).filter((e) => e.token_sha256 !== found.token_sha256),
    );
  }

  private liveEnrollments(now: number): Enrollment[] {
    return readJson<Enrollment[]>(this.enrollmentsFile, []).filter((e) => Date.parse(e.expires_at) > now);
  }

  private findEnrollment(token: string, now: number): Enrollment | undefined {
    const given = Buffer.from(digest(token));
    return this.liveEnrollments(now).find((e) => {
      const kept = Buffer.from(e.token_sha256);
      return kept.length === given.length && timingSafeEqual(kept, given);
    });
  }
}
