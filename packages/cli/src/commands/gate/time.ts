/** An instant the store holds (epoch ms, or none) as `--json` and the text output show it: RFC 3339 UTC. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
