/** `vrp` run from source (tsx), for processes started outside vitest as well (conformance-proxy-client.ts). */
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
export const vrpArgs = ['--import', 'tsx', '--conditions=vrpkit-source', bin];
