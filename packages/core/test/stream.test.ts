import { readStreamCapped } from '@vrpkit/core';
import { describe, expect, it } from 'vitest';

/** A stream of `chunks`, recording whether the reader cancelled it. */
function streamOf(chunks: string[]) {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.pulled++];
      if (next === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(next));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe('readStreamCapped', () => {
  it('returns every byte of a stream at or under the cap', async () => {
    const { stream, state } = streamOf(['ab', 'cd', 'é']);
    const bytes = await readStreamCapped(stream, 6);
    expect(bytes?.toString('utf8')).toBe('abcdé');
    expect(state.cancelled).toBe(false);
  });

  it('stops at the first chunk past the cap, cancels the stream and returns null', async () => {
    const { stream, state } = streamOf(['abc', 'def', 'ghi', 'jkl']);
    expect(await readStreamCapped(stream, 5)).toBeNull();
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(4); // never read to the end
  });
});
