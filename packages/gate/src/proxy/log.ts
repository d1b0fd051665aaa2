/**
 * The proxy's log: one JSON object per line on stderr (stdout is the MCP channel in stdio
 * mode). Callers pass ids, codes and digests only — never tool arguments or results.
 */
export type ProxyLog = (event: string, fields?: Record<string, unknown>, level?: 'info' | 'warn' | 'error') => void;

/**
 * Lines are written together after the current turn of the event loop (`setImmediate`), not in
 * the call that logs: a write to a stderr pipe is synchronous in Node, and done inline it would
 * sit between a tool call's result and its answer to the agent (measured in bench/gateway).
 * Order is kept; a process that is SIGKILLed loses at most the lines of its last turn.
 */
export function jsonLinesLog(write: (text: string) => void = (t) => process.stderr.write(t)): ProxyLog {
  let pending: string[] = [];
  const flush = () => {
    const text = pending.join('');
    pending = [];
    write(text);
  };
  return (event, fields = {}, level = 'info') => {
    if (!pending.length) setImmediate(flush);
    pending.push(`${JSON.stringify({ ts: new Date().toISOString(), level, event, ...fields })}\n`);
  };
}
