import { visibleEscapes } from '@vrpkit/core';
import type { TenantDetail } from '@vrpkit/platform';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type PlatformOptions, platformOptions, withStore } from '../options.js';

/** A tenant as text. The property's name is the tenant's text (controls and bidi overrides included): shown terminal-safe. */
function tenantText(t: TenantDetail): string {
  const lines = [`${t.domain} ${t.status} property ${visibleEscapes(t.property_id)} (${visibleEscapes(t.name)}) revision ${t.revision}\n`];
  for (const k of t.keys) lines.push(`  key ${k.kid} ${k.status} created ${k.created_at}\n`);
  for (const f of t.feeds)
    lines.push(
      `  feed ${f.name} ${f.state} ${f.url}\n    last success ${f.last_success_at ?? 'never'}` +
        `${f.stale_at ? ` (stale from ${f.stale_at})` : ''}, last error ${f.last_error_code ?? 'none'}` +
        `${f.failures > 0 ? ` (${f.failures} in a row)` : ''}, next due ${f.next_due_at}\n`,
    );
  return lines.join('');
}

/** `vrp platform tenants show DOMAIN`: status, property, key ring and feeds (public data only; feed URLs redacted). */
export function registerShow(tenants: Command): void {
  platformOptions(
    tenants
      .command('show')
      .description("a tenant's status, property, key ring and calendar feeds with their sync state (public data only; feed URLs redacted)")
      .argument('<domain>'),
  ).action((domain: string, o: PlatformOptions) =>
    run(o.json, async () => {
      const t = await withStore(o, (s) => s.showTenant(domain));
      if (o.json) printJson(t);
      else process.stdout.write(tenantText(t));
    }),
  );
}
