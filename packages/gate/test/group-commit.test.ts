import { describe, expect, it } from 'vitest';
import { GroupCommit, type Settled } from '../src/store/group-commit.js';

/** A group commit whose "database" answers at once, recording the groups it was sent. */
function recorder() {
  const groups: number[][] = [];
  const gc = new GroupCommit<number, number>(async (members) => {
    groups.push([...members]);
    return members.map((m): Settled<number> => ({ ok: true, value: m * 10 }));
  });
  return { gc, groups };
}

/** The end of the current turn of the event loop. */
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('group commit: when a group leaves (store/group-commit.ts)', () => {
  it("a turn's first consume leads: it is committed without waiting for the event loop to turn", async () => {
    const { gc, groups } = recorder();
    await endOfTurn();
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    expect(await gc.submit(1, undefined)).toBe(10);
    expect(turned).toBe(false);
    expect(groups).toEqual([[1]]);
  });

  it('callers that start together (Promise.all) share the leader’s group', async () => {
    const { gc, groups } = recorder();
    await endOfTurn();
    expect(await Promise.all([1, 2, 3].map((m) => gc.submit(m, undefined)))).toEqual([10, 20, 30]);
    expect(groups).toEqual([[1, 2, 3]]);
  });

  it('consumes that arrive later in the same turn wait for its end and leave together', async () => {
    const { gc, groups } = recorder();
    await endOfTurn();
    await gc.submit(1, undefined);
    // Still the same turn (only microtasks ran since the leader): two arrivals some microtasks apart.
    const second = gc.submit(2, undefined);
    await Promise.resolve();
    await Promise.resolve();
    const third = gc.submit(3, undefined);
    expect(await Promise.all([second, third])).toEqual([20, 30]);
    expect(groups).toEqual([[1], [2, 3]]);
    // The next turn has a leader again.
    await endOfTurn();
    await gc.submit(4, undefined);
    expect(groups).toEqual([[1], [2, 3], [4]]);
  });
});
