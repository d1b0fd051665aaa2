/**
 * `vrp platform serve --console`: the operator console on a listener of its own, under the node
 * console's address rules (`listenConsole`: loopback or private by default, a public address only
 * with `--console-public` and a certificate), its passkeys in the platform database, its fleet
 * samples taken from this process's metrics registry. Its origin is recorded in the database so
 * `vrp platform console enroll` (another process) prints a whole link.
 */
import { type ConsoleActionEntry, type ConsoleListenOptions, listenConsole, listenWithLimits, type ServedConsole } from '@vrpkit/node';
import type { Registry } from 'prom-client';
import type { MasterKey } from '../master-key.js';
import type { PlatformStore } from '../tenants.js';
import { createOperatorConsole } from './app.js';
import { PlatformConsoleCredentials } from './credentials.js';
import { FleetHistory } from './fleet.js';

/** What `--console …` asks for: where, and for a public address the certificate to serve. */
export interface OperatorConsoleListen extends ConsoleListenOptions {
  /** PEM certificate and key for an https console (required on a public address). */
  tls?: { certPem: string; keyPem: string; name: string };
  onAction?: (entry: ConsoleActionEntry) => void;
  /** Fleet sample interval (ms; default one minute). */
  sampleIntervalMs?: number;
}

export interface OperatorConsoleParts {
  store: PlatformStore;
  master: MasterKey;
  registry: Registry;
  now: () => number;
  maxConnectionsPerClient: number;
  onError: (e: unknown) => void;
}

export interface ServedOperatorConsole extends ServedConsole {
  fleet: FleetHistory;
}

export async function startOperatorConsole(o: OperatorConsoleListen, parts: OperatorConsoleParts): Promise<ServedOperatorConsole> {
  const { store } = parts;
  const subject = (await store.info()).operator_domain ?? 'this platform';
  const fleet = new FleetHistory(parts.registry, store.db, parts.now);
  const served = await listenConsole(
    o,
    {
      tls: o.tls ? { certPem: o.tls.certPem, keyPem: o.tls.keyPem } : null,
      ...(o.tls ? { tlsName: o.tls.name } : {}),
      listen: listenWithLimits,
      maxConnectionsPerClient: parts.maxConnectionsPerClient,
    },
    (scheme, hosts) =>
      createOperatorConsole({
        store,
        master: parts.master,
        credentials: new PlatformConsoleCredentials(store.db),
        fleet,
        scheme,
        hosts,
        subject,
        now: parts.now,
        onError: parts.onError,
        ...(o.onAction ? { onAction: o.onAction } : {}),
      }),
  );
  await store.db.updateTable('platform_info').set({ console_origin: served.origin }).where('id', '=', 1).execute();
  fleet.start(parts.onError, o.sampleIntervalMs);
  return { ...served, fleet };
}
