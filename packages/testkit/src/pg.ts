/**
 * PostgreSQL for the store and gate tests: the server `VRPKIT_TEST_PG_URL` names (each test
 * makes its own schema in it). Without the variable those tests skip, saying so; `.ci/run` sets it.
 */

export const PG_URL_ENV = 'VRPKIT_TEST_PG_URL';

/**
 * The test PostgreSQL URL, or undefined after a note naming `VRPKIT_TEST_PG_URL` and what the file
 * `label` skips without it: use as `describe.skipIf(!url)`.
 */
export function testPgUrl(label: string, skipped: string): string | undefined {
  const url = process.env[PG_URL_ENV] || undefined;
  if (!url) console.warn(`[${label}] ${PG_URL_ENV} is unset: SKIPPED ${skipped}`);
  return url;
}
