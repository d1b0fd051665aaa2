/**
 * The performance page's sections, one per bench: what it measures, how to run it, and what the
 * page reads from its result (sections/<bench>.ts; a bench without one shows the ratios its
 * result names, `genericFigures`). A new bench gets a line here.
 */
import { type Extracted, genericFigures } from '../figures.js';
import { gate } from './gate.js';
import { gateAdapters, gateway } from './gateway.js';
import { nodeOffer } from './node-offer.js';
import { platform } from './platform.js';
import { surfaces } from './surfaces.js';

export interface SectionKind {
  title: string;
  /** What follows `npm run bench -- ` to write this result, when it is not the result's own name (`gate` writes `gate-adapters`). */
  command?: string;
  extract: (result: unknown) => Extracted;
}

const generic = (result: unknown): Extracted => ({ figures: genericFigures(result), charts: [] });

/** By bench name (its result file `bench/results/<name>.json`). */
export const SECTIONS: Record<string, SectionKind> = {
  surfaces: { title: 'Tool surfaces: requests per second per surface', extract: surfaces },
  gateway: { title: 'Gate proxy: latency added to a tools/call', extract: gateway },
  'gate-adapters': { title: 'Gate framework adapters: latency added to a tool call', command: 'gate', extract: gateAdapters },
  gate: { title: 'Gate: enforce latency and concurrency', extract: gate },
  platform: { title: 'Platform: throughput vs tenant count', extract: platform },
  'platform-first-visit': { title: 'Platform: a cold tenant’s first visit', command: 'platform --only first-visit', extract: platform },
  'node-offer': { title: 'Node offer endpoint', extract: nodeOffer },
  verify: { title: 'Offer verification', extract: generic },
  receipt: { title: 'MCP receipts', extract: generic },
  booking: { title: 'Booking flow', extract: generic },
  'node-burst': { title: 'Node connection burst', extract: generic },
};

/** The section of `bench`: its own, or the generic one under the bench's name. */
export const sectionOf = (bench: string): SectionKind => SECTIONS[bench] ?? { title: `bench/${bench}`, extract: generic };
