/**
 * The proxy's log: one JSON object per line on stderr (stdout is the MCP channel in stdio
 * mode). Callers pass ids, codes and digests only — never tool arguments or results.
 */
export type ProxyLog = (event: string, fields?: Record<string, unknown>, level?: 'info' | 'warn' | 'error') => void;

export function jsonLinesLog(write: (line: string) => void = (l) => process.stderr.write(l)): ProxyLog {
  return (event, fields = {}, level = 'info') => {
    write(`${JSON.stringify({ ts: new Date().toISOString(), level, event, ...fields })}\n`);
  };
}
