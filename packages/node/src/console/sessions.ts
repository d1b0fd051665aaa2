/**
 * Console sessions, as the gate's approvals page keeps them: a random id in an HttpOnly,
 * SameSite=Strict cookie (Secure on https), kept in this process's memory only (a restart signs
 * everyone out), at most `MAX_SESSIONS`, each ending `SESSION_IDLE_MS` after its last use. Each
 * session has its own secret for its forms' tokens (http/forms.ts), so a token from one session
 * is worth nothing in another. A WebAuthn ceremony's challenge waits in the same kind of store,
 * under a cookie of its own, for at most `CEREMONY_TTL_MS`.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

export const SESSION_COOKIE = 'vrp_console';
export const CEREMONY_COOKIE = 'vrp_console_ceremony';
export const MAX_SESSIONS = 64;
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const CEREMONY_TTL_MS = 5 * 60_000;

export interface ConsoleSession {
  formSecret: Uint8Array;
  passkeyId: string;
  expiresAt: number;
}

/** A WebAuthn challenge waiting for its answer; `enrollment` is the enrollment token for a registration. */
export interface Ceremony {
  challenge: string;
  enrollment?: string;
  expiresAt: number;
}

/** A bounded map of random ids to values, each living until its `expiresAt`. */
class Expiring<T extends { expiresAt: number }> {
  private readonly items = new Map<string, T>();
  constructor(private readonly max: number) {}

  add(value: T): string {
    const id = randomBytes(32).toString('base64url');
    if (this.items.size >= this.max) this.items.delete(this.items.keys().next().value as string);
    this.items.set(id, value);
    return id;
  }

  get(id: string | undefined, now: number): T | undefined {
    const v = id === undefined ? undefined : this.items.get(id);
    if (v && v.expiresAt <= now) this.items.delete(id as string);
    return v && v.expiresAt > now ? v : undefined;
  }

  take(id: string | undefined, now: number): T | undefined {
    const v = this.get(id, now);
    if (id !== undefined) this.items.delete(id);
    return v;
  }
}

export class ConsoleSessions {
  private readonly sessions = new Expiring<ConsoleSession>(MAX_SESSIONS);
  private readonly ceremonies = new Expiring<Ceremony>(MAX_SESSIONS);

  /** `path`: the cookies' `Path`, the console's base path (`/` on a listener of its own), so no other page of the site is sent them. */
  constructor(
    private readonly secure: boolean,
    private readonly path = '/',
  ) {}

  /** The session the request's cookie names, its idle time renewed; undefined when none. */
  current(c: Context, now: number): ConsoleSession | undefined {
    const s = this.sessions.get(getCookie(c, SESSION_COOKIE), now);
    if (s) s.expiresAt = now + SESSION_IDLE_MS;
    return s;
  }

  /** A new session for the passkey `passkeyId`, its cookie set on the answer. */
  open(c: Context, passkeyId: string, now: number): void {
    const id = this.sessions.add({ formSecret: randomBytes(32), passkeyId, expiresAt: now + SESSION_IDLE_MS });
    setCookie(c, SESSION_COOKIE, id, { httpOnly: true, sameSite: 'Strict', path: this.path, secure: this.secure });
  }

  close(c: Context, now: number): void {
    this.sessions.take(getCookie(c, SESSION_COOKIE), now);
    deleteCookie(c, SESSION_COOKIE, { path: this.path, secure: this.secure });
  }

  /** Start a ceremony: its challenge kept under a cookie of its own. */
  begin(c: Context, ceremony: Omit<Ceremony, 'expiresAt'>, now: number): void {
    const id = this.ceremonies.add({ ...ceremony, expiresAt: now + CEREMONY_TTL_MS });
    setCookie(c, CEREMONY_COOKIE, id, { httpOnly: true, sameSite: 'Strict', path: this.path, secure: this.secure });
  }

  /** The ceremony the request's cookie names, used up (a challenge answers once). */
  finish(c: Context, now: number): Ceremony | undefined {
    const found = this.ceremonies.take(getCookie(c, CEREMONY_COOKIE), now);
    deleteCookie(c, CEREMONY_COOKIE, { path: this.path, secure: this.secure });
    return found;
  }
}
