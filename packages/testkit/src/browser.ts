/**
 * Chromium for the browser tests (the WebMCP surface, the property page, the computer-use
 * scenario): the binary the agent's WebMCP client would run — `VRPKIT_CHROMIUM`, else Debian's
 * `/usr/bin/chromium` — started headless with the agent's flags (`--enable-features=WebMCP`,
 * no sandbox, no background networking, component updates or sync, no first-run). Playwright
 * gives every launch a fresh profile directory and removes it when the browser closes.
 *
 * Where no browser is installed the browser tests skip, saying so once per file and naming the
 * variable (as the PostgreSQL tests do without their URL); `.ci/run` installs Chromium so CI
 * runs them.
 */
import { CHROMIUM_BASE_ARGS, CHROMIUM_ENV, chromiumExecutable, chromiumUnavailable } from '@vrpkit/agent';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** The Chromium binary the browser tests use. */
export const chromiumPath = (): string => chromiumExecutable();

/**
 * Whether the browser tests in the file `label` can run. When not, prints why (the path tried,
 * `VRPKIT_CHROMIUM`) so the skip is visible: use as `describe.skipIf(!hasChromium('…'))`.
 */
export function hasChromium(label: string): boolean {
  const why = chromiumUnavailable(chromiumPath());
  if (why) console.warn(`[${label}] ${why}: the browser tests are SKIPPED (set ${CHROMIUM_ENV} to run them)`);
  return why === null;
}

/** Start the test Chromium headless with the agent's flags plus `args` (host mapping, pinned keys). */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_BASE_ARGS, ...args] });
}

/**
 * A new context of `browser` (viewport `width` × 900) and its page with a virtual platform
 * authenticator (CDP `WebAuthn.addVirtualAuthenticator`: CTAP2, resident keys, user verified,
 * presence simulated), so a console's passkey ceremonies run without a person; each context has
 * its own authenticator and so its own passkeys.
 */
export async function contextWithAuthenticator(browser: Browser, width: number): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page };
}
