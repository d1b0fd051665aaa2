/**
 * The signing turn: the Ed25519 signatures a process is asked for during one turn of the event
 * loop are made together at its end (`setImmediate`), back to back, and the answers waiting on
 * them are written together after. Interleaved with the TLS and HTTP work of other requests, a
 * signature and the request around it cost measurably more than back to back (bench/node-offer:
 * a fresh offer's CPU falls by about a fifth, bench/surfaces: an MCP call's receipt likewise): the
 * signing code's tables and the connections' state evict each other from the CPU caches. One
 * request alone waits one `setImmediate`; nothing is signed later than the turn it was asked in.
 *
 * One batch per process: every node service and platform tenant in it shares the turn.
 */

type Job = () => void;

let batch: Job[] | undefined;

function runBatch(): void {
  const jobs = batch ?? [];
  batch = undefined;
  for (const job of jobs) job();
}

/** `sign()` run in this turn's signing batch; its value (or what it threw) settles the promise. */
export function inSigningTurn<T>(sign: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (!batch) {
      batch = [];
      setImmediate(runBatch);
    }
    batch.push(() => {
      try {
        resolve(sign());
      } catch (e) {
        reject(e);
      }
    });
  });
}
