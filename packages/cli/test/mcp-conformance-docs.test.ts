/**
 * docs/conformance.md shows the MCP conformance expectations table exactly as
 * support/mcp-conformance-table.ts renders it: the table the suite's test enforces is the table the
 * docs show, never a second copy. `VRPKIT_UPDATE_DOCS=1` rewrites the docs block from the data.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@vrpkit/testkit/cli';
import { expect, it } from 'vitest';
import { CLIENT_EXPECTED, CLIENT_REASONS, EXPECTED, REASONS, renderConformanceTable } from './support/mcp-conformance-table.js';

const START = '<!-- mcp-conformance-table: generated from packages/cli/test/support/mcp-conformance-table.ts -->';
const END = '<!-- /mcp-conformance-table -->';

it('docs/conformance.md holds the MCP conformance table rendered from the expectations the suite test enforces', () => {
  const file = join(repoRoot, 'docs/conformance.md');
  const doc = readFileSync(file, 'utf8');
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  expect(start, `docs/conformance.md has the marker ${START}`).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  const shown = doc.slice(start + START.length, end);
  const rendered = `\n${renderConformanceTable()}`;
  if (shown !== rendered && process.env.VRPKIT_UPDATE_DOCS === '1')
    writeFileSync(file, doc.slice(0, start + START.length) + rendered + doc.slice(end));
  else expect(shown, 'run with VRPKIT_UPDATE_DOCS=1 to rewrite it').toBe(rendered);
});

it('every reason the table lists is given by some cell (a stale reason would mislead a reader of the docs)', () => {
  const given = new Set(
    Object.values(EXPECTED).flatMap((rows) =>
      Object.values(rows).flatMap((row) => Object.values(row).flatMap((e) => (e === 'pass' ? [] : ['na' in e ? e.na : e.fails]))),
    ),
  );
  expect(Object.keys(REASONS).filter((r) => !given.has(r as keyof typeof REASONS))).toEqual([]);
  const clientGiven = new Set(
    Object.values(CLIENT_EXPECTED).flatMap((rows) =>
      Object.values(rows).flatMap((e) => (e === 'pass' ? [] : ['na' in e ? e.na : e.fails])),
    ),
  );
  expect(Object.keys(CLIENT_REASONS).filter((r) => !clientGiven.has(r as keyof typeof CLIENT_REASONS))).toEqual([]);
});
