/**
 * WebMCP surface client: Debian Chromium with `--enable-features=WebMCP`, driven by
 * playwright-core; the page's registered tool is read and invoked through the DevTools
 * `WebMCP` domain (`WebMCP.enable`, `toolsAdded`, `invokeTool`, `toolResponded`), so the call
 * runs exactly as the page registered it and nothing is injected into the page.
 *
 * Chromium reaches `https://{domain}` the way the hardened fetch does: `--host-resolver-rules`
 * maps the connect-to entries, and instead of a blanket `--ignore-certificate-errors` only the
 * leaf key that the node presented — after it verified against the configured CA with the
 * real host name — is accepted (`--ignore-certificate-errors-spki-list`).
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import { connect } from 'node:tls';
import { PROPERTY_PAGE_PATH } from '@vrpkit/protocol';
import { type Browser, type CDPSession, chromium } from 'playwright-core';
import { AgentError } from '../errors.js';
import { parseConnectTo } from '../hardened-fetch.js';
import { boundToolName, surfaceUrl, unreachableSurface } from './shared.js';
import type { BrowserOptions, ListedTool, OfferArgs, SurfaceContext, SurfaceFetch } from './types.js';

const DEFAULT_TOOL_WAIT_MS = 5_000;
const INVOKE_TIMEOUT_MS = 15_000;
/** After the first registration, how long the page may keep registering before the list is read. */
const REGISTRATION_SETTLE_MS = 150;

export const CHROMIUM_BASE_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--enable-features=WebMCP',
];

/** The variable that names the Chromium binary, and where Debian's `chromium` package puts it. */
export const CHROMIUM_ENV = 'VRPKIT_CHROMIUM';
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/** The Chromium binary to run: the caller's, else `VRPKIT_CHROMIUM`, else Debian's. */
export function chromiumExecutable(browser?: BrowserOptions): string {
  return browser?.executablePath ?? process.env[CHROMIUM_ENV] ?? DEFAULT_CHROMIUM;
}

/**
 * Why no browser can start from `path` (a sentence naming the path and `VRPKIT_CHROMIUM`), or
 * null when it is an executable file. Checked before launching: a launch that fails this way
 * leaves Playwright's temporary profile and artifacts directories behind in the temp folder.
 */
export function chromiumUnavailable(path: string): string | null {
  try {
    accessSync(path, constants.X_OK);
    if (statSync(path).isFile()) return null;
  } catch {}
  return `no executable Chromium at ${path}: install Debian's chromium or set ${CHROMIUM_ENV} to the browser's path`;
}

interface RegisteredTool {
  name: string;
  inputSchema?: unknown;
  frameId: string;
}

interface ToolResponse {
  invocationId: string;
  status: string;
  output?: unknown;
  errorText?: string;
  exception?: { description?: string };
}

interface FrameTree {
  frame: { id: string; url: string };
  childFrames?: FrameTree[];
}

function frameUrls(tree: FrameTree, into = new Map<string, string>()): Map<string, string> {
  into.set(tree.frame.id, tree.frame.url);
  for (const child of tree.childFrames ?? []) frameUrls(child, into);
  return into;
}

/** Base64 SHA-256 of a certificate's SubjectPublicKeyInfo, the form Chromium's SPKI list takes. */
export function spkiSha256(cert: X509Certificate): string {
  return createHash('sha256')
    .update(cert.publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');
}

/**
 * The leaf key `host:port` presents, read over a TLS connection that verifies the chain against
 * `ca` and the certificate against `host` — so only a key the configured CA vouches for this
 * host is ever pinned.
 */
function verifiedLeafSpki(host: string, port: number, dial: { host: string; port: number }, ca: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: dial.host, port: dial.port, servername: host, ca, rejectUnauthorized: true, timeout: 5_000 }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (!cert) reject(new AgentError('page_unreachable', { reason: `no certificate from ${host}:${port}` }));
      else resolve(spkiSha256(cert));
    });
    socket.once('error', reject);
    socket.once('timeout', () => socket.destroy(new AgentError('page_unreachable', { reason: `TLS to ${host}:${port} timed out` })));
  });
}

/** Chromium flags that reproduce the agent's network policy for the page host. */
export async function chromiumNetworkArgs(pageUrl: URL, ctx: SurfaceContext): Promise<string[]> {
  const network = ctx.options.network ?? {};
  const map = parseConnectTo(network.connectTo);
  const args: string[] = [];
  if (map.size > 0) {
    const rules = [...map.entries()].map(([from, to]) => `MAP ${from} ${to.host.includes(':') ? `[${to.host}]` : to.host}:${to.port}`);
    args.push(`--host-resolver-rules=${rules.join(', ')}`);
  }
  const ca = network.ca === undefined ? [] : Array.isArray(network.ca) ? network.ca : [network.ca];
  if (ca.length > 0) {
    const port = Number(pageUrl.port || 443);
    const dial = map.get(`${pageUrl.hostname}:${port}`);
    const leaf = await verifiedLeafSpki(
      pageUrl.hostname,
      port,
      dial ? { host: dial.host, port: Number(dial.port) } : { host: pageUrl.hostname, port },
      ca,
    );
    args.push(`--ignore-certificate-errors-spki-list=${leaf}`);
  }
  return args;
}

/** Chromium started with the agent's network policy, or the surface's coded report of why not. */
async function launchBrowser(pageUrl: URL, ctx: SurfaceContext): Promise<Browser | SurfaceFetch> {
  let networkArgs: string[];
  try {
    networkArgs = await chromiumNetworkArgs(pageUrl, ctx);
  } catch (e) {
    return unreachableSurface(pageUrl, e, 'page_unreachable');
  }
  // Without a browser the surface cannot be read: a coded report, never a throw that takes the
  // other surfaces of the same run down with it.
  const executablePath = chromiumExecutable(ctx.options.browser);
  const missing = chromiumUnavailable(executablePath);
  if (missing) return unreachableSurface(pageUrl, new AgentError('browser_unavailable', { reason: missing }), 'browser_unavailable');
  try {
    return await chromium.launch({ executablePath, args: [...CHROMIUM_BASE_ARGS, ...networkArgs] });
  } catch (e) {
    const why = (e instanceof Error ? e.message : String(e)).split('\n')[0];
    const message = `Chromium at ${executablePath} did not start (${why}); ${CHROMIUM_ENV} names the browser`;
    return unreachableSurface(pageUrl, new AgentError('browser_unavailable', { reason: message }), 'browser_unavailable');
  }
}

/** The page's WebMCP registrations as the browser reports them (Chromium's `WebMCP` CDP domain), and the tool answers by invocation. */
async function watchTools(cdp: CDPSession) {
  const registered: RegisteredTool[] = [];
  let firstRegistration: () => void = () => {};
  const registeredOnce = new Promise<void>((resolve) => {
    firstRegistration = resolve;
  });
  cdp.on('WebMCP.toolsAdded', (event: { tools: RegisteredTool[] }) => {
    registered.push(...event.tools);
    firstRegistration();
  });
  cdp.on('WebMCP.toolsRemoved', (event: { tools: { name: string; frameId: string }[] }) => {
    for (const gone of event.tools) {
      const i = registered.findIndex((t) => t.name === gone.name && t.frameId === gone.frameId);
      if (i >= 0) registered.splice(i, 1);
    }
  });
  const responses = new Map<string, (r: ToolResponse) => void>();
  cdp.on('WebMCP.toolResponded', (event: ToolResponse) => responses.get(event.invocationId)?.(event));
  await cdp.send('WebMCP.enable');
  return { registered, registeredOnce, responses };
}

/** Call the registered tool with the three arguments (Node Tool Binding v0.1 §4) and wait for its answer, or null after the timeout. */
async function invokeTool(cdp: CDPSession, responses: Map<string, (r: ToolResponse) => void>, tool: RegisteredTool, args: OfferArgs) {
  const { invocationId } = await cdp.send('WebMCP.invokeTool', {
    frameId: tool.frameId,
    toolName: tool.name,
    input: { ...args } as unknown as Record<string, string>,
  }); // the protocol types input as strings; Chromium takes any JSON object
  return new Promise<ToolResponse | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), INVOKE_TIMEOUT_MS);
    responses.set(invocationId, (r) => {
      clearTimeout(timer);
      resolve(r);
    });
  });
}

/** The tool's answer as the surface's report: the envelope, or why none (§5: a rejected execute() promise is an unverified outcome). */
function answered(answer: ToolResponse | null): Pick<SurfaceFetch, 'envelope' | 'error'> {
  if (!answer)
    return { envelope: null, error: { code: 'tool_timeout', message: `no response from the page's tool within ${INVOKE_TIMEOUT_MS} ms` } };
  if (answer.status !== 'Completed') {
    const why = answer.exception?.description?.split('\n')[0] ?? answer.errorText ?? answer.status;
    return { envelope: null, error: { code: 'tool_rejected', message: why.slice(0, 500) } };
  }
  const envelope = answer.output ?? null;
  return { envelope, error: answer.output === undefined ? { code: 'no_envelope', message: 'the tool returned nothing' } : null };
}

/** The page read in the browser: the tools it registered, and the bound one called once (Node Tool Binding v0.1 §3–§6). */
async function readPage(browser: Browser, pageUrl: URL, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const unreachable = (e: unknown) => unreachableSurface(pageUrl, e, 'page_unreachable');
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const { registered, registeredOnce, responses } = await watchTools(cdp);
  let response: Awaited<ReturnType<typeof page.goto>>;
  try {
    response = await page.goto(pageUrl.href, { waitUntil: 'load', timeout: 15_000 });
  } catch (e) {
    return unreachable(e);
  }
  if (!response?.ok())
    return unreachable(new AgentError('page_unreachable', { reason: `the page answered HTTP ${response?.status() ?? 'nothing'}` }));
  const toolWaitMs = ctx.options.browser?.toolWaitMs ?? DEFAULT_TOOL_WAIT_MS;
  await Promise.race([registeredOnce.then(() => page.waitForTimeout(REGISTRATION_SETTLE_MS)), page.waitForTimeout(toolWaitMs)]);
  const { frameTree } = (await cdp.send('Page.getFrameTree')) as unknown as { frameTree: FrameTree };
  const pageHost = new URL(page.url()).hostname;
  const tools: ListedTool[] = registered.map((t) => ({ name: t.name, input_schema: t.inputSchema ?? null }));
  const name = boundToolName(tools);
  const base = { surface_url: page.url(), reached: true, tools, tool_name: name };
  if (!name) return { ...base, served_from: [pageHost], envelope: null, error: null };
  const tool = registered.find((t) => t.name === name) as RegisteredTool;
  // §6: the origin that registered the tool (its frame) and the page itself.
  const frameUrl = frameUrls(frameTree).get(tool.frameId);
  const servedFrom = [pageHost, frameUrl ? new URL(frameUrl).hostname : ''];
  return { ...base, served_from: servedFrom, ...answered(await invokeTool(cdp, responses, tool, args)) };
}

export async function fetchViaWebMcp(target: string, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const pageUrl = surfaceUrl(target, PROPERTY_PAGE_PATH);
  const browser = await launchBrowser(pageUrl, ctx);
  if (!('newContext' in browser)) return browser;
  try {
    return await readPage(browser, pageUrl, args, ctx);
  } catch (e) {
    return unreachableSurface(pageUrl, e, 'page_unreachable');
  } finally {
    await browser.close();
  }
}
