/** `vrp demo` — what `npm start` runs: a sample node under .vrp-demo/, served in dev mode until Ctrl-C. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { isVrpError } from '@vrpkit/core';
import { addDays, initNode, localDate, offerFor, type ServedNode, serveNode } from '@vrpkit/node';
import { AGENT_CARD_PATH, BOOK_PATH, DISCOVERY_PATH, JWKS_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { serveUntilSignal } from '../../io.js';
import { reachHints, requestLogger } from '../node/output.js';

const DEMO_DOMAIN = 'villa-demo.example';

/** The first stay the sample calendar can actually sell, so the commands show a quoteable offer. */
async function quoteableStay(served: ServedNode): Promise<{ check_in: string; check_out: string }> {
  const today = localDate(served.service.now(), served.service.property().time_zone);
  for (let d = 30; d < 120; d++) {
    const candidate = { check_in: addDays(today, d), check_out: addDays(today, d + 3) };
    const r = await offerFor(served.service, { ...candidate, guests: 2 }, { fresh: true });
    if (r.ok && r.envelope.offer.agent_permission.may_quote_as_official_direct_offer) return candidate;
  }
  return { check_in: addDays(today, 30), check_out: addDays(today, 33) };
}

/** The ready-to-paste commands: every document and surface on the canonical origin, and how to fetch and verify an offer. */
async function instructions(served: ServedNode): Promise<string> {
  const { connectTo, curl } = reachHints(served);
  const ca = relative(process.cwd(), served.caFile!) || served.caFile!;
  const stay = await quoteableStay(served);
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
    `  npm run vrp -- verify ${origin} --check-in ${stay.check_in} --check-out ${stay.check_out} --guests 2 --connect-to ${connectTo} --cacert ${ca}`,
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
  // The demo keeps its port across runs, so the commands it printed last time still work.
  const portFile = join(dataDir, 'demo-port');
  const remembered = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0;
  const options = { dataDir, dev: true, ...(o.quiet ? {} : { log: requestLogger(false) }) };
  const served = await serveNode({ ...options, port: o.port ?? remembered }).catch((e: unknown) => {
    if (o.port !== undefined || !remembered || !isVrpError(e) || e.code !== 'listen_failed') throw e;
    process.stderr.write(`port ${remembered} of the last run is taken; listening on another one\n`);
    return serveNode({ ...options, port: 0 });
  });
  writeFileSync(portFile, `${served.port}\n`);
  // Listen for Ctrl-C before saying it stops the node.
  const stopped = serveUntilSignal(served);
  process.stdout.write(await instructions(served));
  await stopped;
}
