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
import type { TestSmtp } from './mail.js';
import type { NodeClient } from './node.js';

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

/** What a guest-page step answered: the HTTP status, the page, the session status and any refusal code it shows. */
export interface GuestStepAnswer {
  status: number;
  text: string;
  sessionStatus: string | undefined;
  refusal: string | undefined;
}

/**
 * One step on a session's guest page (`continue_url`) as a browser on the node's origin does it:
 * GET the page for its form token, then POST the step with Fetch Metadata and Origin of that origin.
 */
export async function guestStep(
  client: NodeClient,
  domain: string,
  id: string,
  step: 'send_code' | 'confirm',
  code = '',
): Promise<GuestStepAnswer> {
  const page = await client.get(`/ucp/continue/${id}`);
  const token = /name="form_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const form = new URLSearchParams({ session_id: id, form_token: token, step, ...(code ? { code } : {}) });
  const res = await client.request('POST', `/ucp/continue/${id}`, {
    body: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `https://${domain}`, 'sec-fetch-site': 'same-origin' },
  });
  return {
    status: res.status,
    text: res.text,
    sessionStatus: /data-status="([a-z_]+)"/.exec(res.text)?.[1],
    refusal: /data-refusal="([a-z_]+)"/.exec(res.text)?.[1],
  };
}

/** The one-time code in a mail the node sent (its subject: "Your confirmation code for DOMAIN: NNNNNN"). */
export const mailedCodeOf = (raw: string): string | undefined => /code for [^:\r\n]+: (\d{6})/.exec(raw)?.[1];

/** Ask the page to mail a code to the session's buyer `email` and read it from the test SMTP server. */
export async function mailedCode(client: NodeClient, domain: string, smtp: TestSmtp, id: string, email: string): Promise<string> {
  const before = smtp.received.length;
  const sent = await guestStep(client, domain, id, 'send_code');
  if (sent.refusal) throw new Error(`the page refused to send a code: ${sent.refusal}`);
  const code = mailedCodeOf((await smtp.next(email, before)).raw);
  if (!code) throw new Error('the mail holds no code');
  return code;
}
