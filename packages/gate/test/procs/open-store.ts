/**
 * Opener child: opens the gate store argv[2] names (a target for `openGateStore`), which migrates
 * it if needed, prints `OPEN <policy_epoch>` and closes it. Several at once on a fresh store is
 * what N gate processes starting together do.
 */
import { openGateStore } from '@vrpkit/gate';

const store = await openGateStore(JSON.parse(process.argv[2] ?? '""') as string, { poolSize: 1 });
process.stdout.write(`OPEN ${(await store.epochs.current()).policy_epoch}\n`);
await store.close();
