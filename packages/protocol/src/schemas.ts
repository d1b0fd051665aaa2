import { readFileSync } from 'node:fs';

/** The official VRP JSON Schemas shipped (verbatim) in this package's `schemas/` folder. */
export const OFFICIAL_SCHEMAS = {
  discovery: 'discovery-v0.1.schema.json',
  jwks: 'jwks-v0.1.schema.json',
  offer: 'verified-stay-offer-v0.1.schema.json',
  verificationResult: 'verified-stay-offer-verification-result-v0.1.schema.json',
  receipt: 'vrp-receipt.v1.schema.json',
  conformanceReport: 'conformance-report-v0.1.schema.json',
} as const;

export type OfficialSchemaName = keyof typeof OFFICIAL_SCHEMAS;

const cache = new Map<OfficialSchemaName, Record<string, unknown>>();

/** Load one official schema as a JSON object (cached). Works from src/ and dist/ alike. */
export function officialSchema(name: OfficialSchemaName): Record<string, unknown> {
  let s = cache.get(name);
  if (!s) {
    s = JSON.parse(readFileSync(new URL(`../schemas/${OFFICIAL_SCHEMAS[name]}`, import.meta.url), 'utf8')) as Record<string, unknown>;
    cache.set(name, s);
  }
  return s;
}
