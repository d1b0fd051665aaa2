/**
 * The one way an admin operation (`vrp node init`, `property`, `keys`, `calendar`) reaches a
 * node's store: open it from the data directory, run the operation, close it whatever happened.
 */
import type { Clock } from '@vrpkit/core';
import { storeTargetFor } from '../datadir.js';
import { NodeStore } from '../store/store.js';

/** Which node an admin operation works on; what `vrp node …` passes from `--data-dir` / `--database-url`. */
export interface NodeStoreOptions {
  dataDir: string;
  /** The PostgreSQL URL of a node whose store is postgres (default: VRP_NODE_DATABASE_URL). */
  databaseUrl?: string;
  /** The operation's clock (default the system clock); injected in tests. */
  clock?: Clock;
}

/** Open the store of the node in `o.dataDir`, run `fn` with it, and close it afterwards (also when `fn` throws). */
export async function withNodeStore<T>(o: NodeStoreOptions, fn: (store: NodeStore) => Promise<T>): Promise<T> {
  const store = await NodeStore.open(storeTargetFor(o.dataDir, o.databaseUrl));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
