import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const pkgs = ['core', 'sql', 'protocol', 'node', 'platform', 'agent', 'conformance', 'gate', 'cli'];

// Tests run against the packages' TypeScript sources (no build step needed): each
// `@vrpkit/x` import resolves to packages/x/src/index.ts. Child processes that tests
// spawn get the same through Node's `--conditions=vrpkit-source` (see package exports).
export default defineConfig({
  resolve: {
    alias: [
      ...pkgs.map((p) => ({
        find: new RegExp(`^@vrpkit/${p}$`),
        replacement: fileURLToPath(new URL(`./packages/${p}/src/index.ts`, import.meta.url)),
      })),
      // The gate's subpath entries (`@vrpkit/gate/proxy`, `@vrpkit/gate/ui`), also from source:
      // without this they would resolve to dist/, which a fresh checkout has not built.
      { find: /^@vrpkit\/gate\/(proxy|ui)$/, replacement: fileURLToPath(new URL('./packages/gate/src/$1/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time at least: most files wait on servers, TLS handshakes, PostgreSQL and
    // child processes rather than compute, and vitest's default (cores - 1) runs one file at a time
    // on a 2-core machine (the CI time is in the README).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default'],
  },
});
