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

/** What a person sees of the page's charts: the smallest rendered text (CSS px) and each chart's axis labels in order. */
export interface ChartLegibility {
  /** Smallest font size on screen (CSS px) of any text drawn in a `figure svg`: its own size times the scale the stylesheet drew the SVG at. */
  smallestTextPx: number;
  /** Each chart's axis tick labels, left to right or top to bottom, as drawn. */
  axisLabels: string[][];
  /** Whether any chart is drawn wider than the page's viewport. */
  overflows: boolean;
}

/** Measure the charts of `page` as laid out at its viewport (used at 390 px: a phone). */
export function chartLegibility(page: Page): Promise<ChartLegibility> {
  return page.evaluate(() => {
    let smallest = Number.POSITIVE_INFINITY;
    let overflows = false;
    const axisLabels: string[][] = [];
    for (const svg of document.querySelectorAll('figure svg')) {
      const box = svg.getBoundingClientRect();
      if (box.right > document.documentElement.clientWidth + 0.5) overflows = true;
      const scale = box.width / Number(svg.getAttribute('width'));
      for (const text of svg.querySelectorAll('text')) {
        if (text.textContent?.trim()) smallest = Math.min(smallest, Number.parseFloat(getComputedStyle(text).fontSize) * scale);
      }
      // Vega draws each axis as a `g.role-axis` with its labels in `g.role-axis-label` (a grid's axis has none).
      for (const axis of svg.querySelectorAll('g.role-axis')) {
        const labels = [...axis.querySelectorAll('g.role-axis-label text')].map((t) => t.textContent ?? '');
        if (labels.length) axisLabels.push(labels);
      }
    }
    return { smallestTextPx: smallest, axisLabels, overflows };
  });
}
