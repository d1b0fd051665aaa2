/**
 * Evidence for a conformance verdict: every read the checker made (method, URL, status, the
 * SHA-256 of the bytes read), recorded by wrapping the fetch the agent's clients use, so a
 * report says exactly what was seen without carrying the documents themselves.
 */
import { createHash } from 'node:crypto';
import type { FetchLike } from '@vrpkit/core';

export interface Evidence {
  method: string;
  url: string;
  /** HTTP status, or null when nothing answered. */
  status: number | null;
  /** sha256 hex of the response body; null for a stream (SSE) or when nothing answered. */
  sha256: string | null;
}

export interface RecordingFetch {
  fetch: FetchLike;
  /** Every read so far, once the bodies read have been digested. */
  reads(): Promise<Evidence[]>;
}

export function recordingFetch(inner: FetchLike): RecordingFetch {
  const log: Promise<Evidence>[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    let res: Response;
    try {
      res = await inner(input, init);
    } catch (e) {
      log.push(Promise.resolve({ method, url, status: null, sha256: null }));
      throw e;
    }
    // A long-lived event stream is never waited on; every other body is digested from a clone.
    const streaming = (res.headers.get('content-type') ?? '').includes('text/event-stream') || res.body === null;
    log.push(
      streaming
        ? Promise.resolve({ method, url, status: res.status, sha256: null })
        : res
            .clone()
            .arrayBuffer()
            .then(
              (b) => ({ method, url, status: res.status, sha256: createHash('sha256').update(Buffer.from(b)).digest('hex') }),
              () => ({ method, url, status: res.status, sha256: null }),
            ),
    );
    return res;
  };
  return { fetch, reads: () => Promise.all(log) };
}
