/**
 * The published UCP JSON Schemas (vendored unmodified in `fixtures/ucp/schemas`, Apache-2.0, see
 * `fixtures/ucp/PROVENANCE.md`) loaded into one Ajv 2020-12 instance, so a test checks what a node
 * sends or accepts against the specification's own files, never against a shape vrpkit wrote.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const SCHEMA_ROOT = fileURLToPath(new URL('../fixtures/ucp/schemas/', import.meta.url));
/** Every vendored schema's `$id` starts here (`https://ucp.dev/schemas/shopping/checkout.json`). */
export const UCP_SCHEMA_BASE = 'https://ucp.dev/schemas/';

function schemaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? schemaFiles(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
  );
}

let loaded: Ajv2020 | undefined;
function ucpAjv(): Ajv2020 {
  if (loaded) return loaded;
  // `strict: false`: the schemas carry UCP's own annotation keywords (`ucp_request`, `name`, `requires`).
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  for (const file of schemaFiles(SCHEMA_ROOT)) ajv.addSchema(JSON.parse(readFileSync(file, 'utf8')) as object);
  loaded = ajv;
  return ajv;
}

/**
 * The errors of `doc` against the vendored schema at `ref`: a path under `schemas/` with an optional
 * fragment (`shopping/checkout.json`, `ucp.json#/$defs/business_schema`,
 * `shopping/payment_terms.json#/$defs/dev.ucp.shopping.checkout`). Empty when valid.
 */
export function ucpSchemaErrors(ref: string, doc: unknown): ErrorObject[] {
  const validate = ucpAjv().getSchema(new URL(ref, UCP_SCHEMA_BASE).href);
  if (!validate) throw new Error(`no vendored UCP schema ${ref} under ${relative(process.cwd(), SCHEMA_ROOT)}`);
  return validate(doc) ? [] : [...(validate.errors ?? [])];
}
