/**
 * `vrp platform tenants import DIR`: one property file per tenant, named after its domain
 * (`villa.example.yaml`, `.yml` or `.json`). Every file is validated first; a bad file is
 * reported with its file, field and reason and the rest still import. Idempotent: a domain that
 * is already a tenant is skipped, so an interrupted or repeated import converges.
 */
import { type Dirent, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { isVrpError } from '@vrpkit/core';
import { assertCanonicalDomain, assertUrlOnDomain, InvalidPropertyError, readPropertyFile } from '@vrpkit/node';
import { PlatformError } from './errors.js';
import type { MasterKey } from './master-key.js';
import type { NewTenant, PlatformStore } from './tenants.js';

const PROPERTY_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** Tenants written per transaction: large enough for bulk inserts, small enough to show progress and bound a retry. */
const IMPORT_BATCH = 200;

export interface ImportProblem {
  file: string;
  field: string;
  reason: string;
}

export interface ImportResult {
  files: number;
  imported: number;
  already_present: number;
  failed: ImportProblem[];
}

export interface ImportProgress {
  done: number;
  total: number;
}

export async function importTenants(
  store: PlatformStore,
  master: MasterKey,
  dir: string,
  onProgress?: (p: ImportProgress) => void,
): Promise<ImportResult> {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => PROPERTY_EXTENSIONS.has(extname(e.name).toLowerCase()))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (e) {
    throw new PlatformError('import_dir_unreadable', { dir, reason: (e as NodeJS.ErrnoException).code ?? 'error' });
  }
  const failed: ImportProblem[] = [];
  const valid: NewTenant[] = [];
  for (const entry of entries) {
    const file = join(dir, entry.name);
    const domain = entry.name.slice(0, -extname(entry.name).length).toLowerCase();
    try {
      // The folder's files may come from hosts: a symbolic link would lead the import outside the
      // folder, a FIFO or device would block it. Only regular files are read, without following links.
      if (!entry.isFile()) throw new InvalidPropertyError(file, '', 'not a regular file (links and special files are not imported)');
      assertCanonicalDomain(domain);
      const property = readPropertyFile(file, { followLinks: false });
      assertUrlOnDomain(property, domain, file);
      valid.push({ domain, property });
    } catch (e) {
      if (e instanceof InvalidPropertyError) failed.push({ file, field: e.field || '(root)', reason: e.reason });
      else if (isVrpError(e)) failed.push({ file, field: '(file name)', reason: e.message });
      else throw e;
    }
  }
  let imported = 0;
  for (let i = 0; i < valid.length; i += IMPORT_BATCH) {
    imported += (await store.addTenants(master, valid.slice(i, i + IMPORT_BATCH), { skipExisting: true })).length;
    onProgress?.({ done: Math.min(i + IMPORT_BATCH, valid.length), total: valid.length });
  }
  return { files: entries.length, imported, already_present: valid.length - imported, failed };
}
