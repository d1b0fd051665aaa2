/**
 * The console's page frame and its small shared pages (sign-in, enrollment, a message, a
 * confirmation step), server-rendered HTML. Everything from outside is escaped (`escapeHtml`),
 * and the app shows every control, bidi or invisible character as a visible `\u{…}` escape
 * (app.ts), so guest text reads on the page exactly as it was sent and can open no markup.
 */

import { FORM_TOKEN_FIELD, type FormSpec, formGuard } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import type { ConsoleSession } from './sessions.js';

/** Largest form body the console takes (a note or a reason is short). */
export const MAX_FORM_BYTES = 8 * 1024;

/** What a signed-in page needs to render its forms. */
export interface PageContext {
  origin: string;
  now: number;
  session: ConsoleSession;
  /** The console's frame (its name and sections). */
  frame: ConsoleFrame;
  /** The section the page belongs to, marked in the navigation. */
  section: Section;
  /**
   * The path the console is mounted at behind the node's reverse proxy (`--console-path`), '' on its
   * own listener: every link, form action, redirect and asset URL is built under it (`link`).
   */
  base: string;
}

/** A console path as the browser must ask for it: under the console's base path. */
export function link(p: { base: string }, path: string): string {
  return `${p.base}${path}`;
}

/**
 * What tells one console from another on every page: its name (`host console`, `operator
 * console`), whom it serves (shown on the sign-in page), the command that prints an enrollment
 * link, and its sections (path segment, label) in navigation order, the first the home page.
 */
export interface ConsoleFrame {
  product: string;
  subject: string;
  enrollCommand: string;
  sections: readonly (readonly [string, string])[];
}

export type Section = string;

/** The host console's frame for the node of `domain`. */
export function hostConsoleFrame(domain: string): ConsoleFrame {
  return {
    product: 'host console',
    subject: domain,
    enrollCommand: 'vrp node console enroll',
    sections: [
      ['inbox', 'Inbox'],
      ['calendar', 'Calendar'],
      ['property', 'Prices and property'],
      ['keys', 'Keys and health'],
      ['activity', 'Activity'],
      ['passkeys', 'Passkeys'],
    ],
  };
}

/** A form of `spec` for this session: its bound hidden fields and its token. */
export function formFields(p: PageContext, spec: FormSpec, values: Readonly<Record<string, string>> = {}): string {
  const token = formGuard(spec, p.session.formSecret, MAX_FORM_BYTES).token(p.origin, values, p.now);
  const hidden = spec.bound.map((n) => `<input type="hidden" name="${e(n)}" value="${e(values[n] ?? '')}">`).join('');
  return `${hidden}<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${e(token)}">`;
}

export const SIGNOUT_FORM: FormSpec = { action: '/signout', bound: [] };

/** `data-base` tells the console's script (assets.ts) where the ceremonies are posted. */
function document(title: string, product: string, body: string, scripts: boolean, base: string): string {
  const at = e(base);
  return `<!doctype html><html lang="en" data-base="${at}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)} · ${e(product)}</title><link rel="stylesheet" href="${at}/assets/console.css">${
    scripts ? `<script src="${at}/assets/webauthn.js" defer></script><script src="${at}/assets/console.js" defer></script>` : ''
  }</head><body>${body}</body></html>`;
}

/** A signed-in page: navigation, sign-out, and `main`. */
export function page(p: PageContext, title: string, main: string): string {
  const nav = p.frame.sections
    .map(([s, label]) => `<li><a href="${e(link(p, `/${s}`))}"${s === p.section ? ' aria-current="page"' : ''}>${label}</a></li>`)
    .join('');
  return document(
    title,
    p.frame.product,
    `<a class="skip" href="#main">Skip to content</a><header><nav aria-label="Console"><ul>${nav}<li><form class="inline" method="post" action="${e(link(p, SIGNOUT_FORM.action))}">${formFields(
      p,
      SIGNOUT_FORM,
    )}<button class="secondary" type="submit">Sign out</button></form></li></ul></nav></header>
<main id="main"><h1>${e(title)}</h1>${main}</main>`,
    false,
    p.base,
  );
}

/** A page outside a session (sign-in, enrollment, refusals): no navigation. */
export function bare(title: string, main: string, scripts = false, product = 'console', base = ''): string {
  return document(title, product, `<main id="main"><h1>${e(title)}</h1>${main}</main>`, scripts, base);
}

export function signInPage(f: ConsoleFrame, hasPasskeys: boolean, base = ''): string {
  return bare(
    'Sign in',
    `<p>The ${e(f.product)} of <strong>${e(f.subject)}</strong>.</p>${
      hasPasskeys
        ? '<p><button id="signin" type="button">Sign in with your passkey</button></p>'
        : `<p>No passkey is enrolled yet. Run <code>${e(f.enrollCommand)}</code> and open the link it prints.</p>`
    }<p id="ceremony-status" role="status" aria-live="polite"></p>`,
    hasPasskeys,
    f.product,
    base,
  );
}

export function enrollPage(f: ConsoleFrame, token: string, base = ''): string {
  return bare(
    'Enroll a passkey',
    `<p>Create a passkey for the ${e(f.product)} of <strong>${e(f.subject)}</strong>. This link works once.</p>
<p><button id="enroll" type="button" data-token="${e(token)}">Create a passkey</button></p>
<p id="ceremony-status" role="status" aria-live="polite"></p>`,
    true,
    f.product,
    base,
  );
}

/** A message outside the frame; `back` is a console path (under `base`). */
export function messagePage(title: string, text: string, back?: string, base = ''): string {
  return bare(title, `<p>${e(text)}</p>${back ? `<p><a href="${e(link({ base }, back))}">Back</a></p>` : ''}`, false, 'console', base);
}

/** The confirmation step of a change that cannot be undone (a key rotated or revoked). */
export function confirmPage(
  p: PageContext,
  title: string,
  what: string,
  spec: FormSpec,
  values: Record<string, string>,
  back: string,
): string {
  return page(
    p,
    title,
    `<p>${e(what)}</p><form method="post" action="${e(link(p, spec.action))}">${formFields(p, spec, values)}
<button type="submit">Yes, ${e(title.toLowerCase())}</button> <a href="${e(link(p, back))}">Cancel</a></form>`,
  );
}

/** A table that may scroll sideways on a phone: a named region that takes focus, so a keyboard can scroll it too. */
export function scrollable(label: string, table: string): string {
  return `<div class="scroll" role="region" tabindex="0" aria-label="${e(label)}">${table}</div>`;
}

/** An instant as the host reads it (UTC, to the minute), or a dash. */
export function when(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : '—';
}
