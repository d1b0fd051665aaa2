/** `vrp demo` — what `npm start` runs: a sample node under .vrp-demo/, served in dev mode until Ctrl-C. */
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { AGENT_CARD_PATH, BOOK_PATH, DISCOVERY_PATH, JWKS_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { serveUntilSignal } from '../../io.js';
import { onRememberedPort, quoteableStay, reachHints, requestLogger, vrpCommands } from '../node/output.js';

const DEMO_DOMAIN = 'villa-demo.example';

/** The ready-to-paste commands: every document and surface on the canonical origin, and how to fetch and verify an offer. */
async function instructions(served: ServedNode): Promise<string> {
  const { curl } = reachHints(served);
  const ca = relative(process.cwd(), served.caFile!) || served.caFile!;
  const stay = await quoteableStay(served);
  const commands = vrpCommands(served, stay);
  const q = `check_in=${stay.check_in}&check_out=${stay.check_out}&guests=2`;
  const origin = served.origin;
  return [
    '',
    `vrpkit demo node: ${origin}  (listening on ${served.address}:${served.port}, dev CA ${ca})`,
    '',
    'Documents and surfaces (all on the canonical origin):',
    `  discovery   ${origin}${DISCOVERY_PATH}`,
    `  JWKS        ${origin}${JWKS_PATH}`,
    `  offers      ${origin}${OFFER_ENDPOINT_PATH}?${q}`,
    `  MCP         ${origin}${MCP_ENDPOINT_PATH}`,
    `  A2A card    ${origin}${AGENT_CARD_PATH}`,
    `  WebMCP page ${origin}/`,
    `  booking     ${origin}${BOOK_PATH}?checkIn=${stay.check_in}&checkOut=${stay.check_out}&guests=2`,
    '',
    'Fetch a signed offer:',
    `  ${curl(`${OFFER_ENDPOINT_PATH}?${q}`).replace(served.caFile!, ca)}`,
    '',
    'Fetch and verify it (signature, freshness, safe-to-quote):',
    `  ${commands.verify}`,
    '',
    'Check it against the spec (conformance):',
    `  ${commands.conformance}`,
    '',
    'Ctrl-C stops the node.',
    '',
  ].join('\n');
}

/** Create the sample node on first run, serve it on the port of the last run (else another), print the commands, wait for Ctrl-C. */
export async function runDemoNode(o: { dir: string; port?: number; quiet?: boolean }): Promise<void> {
  const dataDir = resolve(o.dir);
  if (!existsSync(join(dataDir, 'node.json'))) {
    const r = await initNode({ domain: DEMO_DOMAIN, dataDir });
    process.stdout.write(`created a sample node for ${r.canonical_domain} in ${o.dir}/ (signing key ${r.kid})\n`);
  }
  const options = { dataDir, dev: true, ...(o.quiet ? {} : { log: requestLogger(false) }) };
  const served = await onRememberedPort(dataDir, o.port, (port) => serveNode({ ...options, port }));
  // Listen for Ctrl-C before saying it stops the node.
  const stopped = serveUntilSignal(served);
  process.stdout.write(await instructions(served));
  await stopped;
}
