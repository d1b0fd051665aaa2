/**
 * The layout's dependency rule, checked from what is on disk: every package's manifest and the
 * import statements of its `src/**` and `test/**` TypeScript files.
 *
 *   core ← protocol ← {node, agent} ← conformance ← cli;  node ← platform ← cli;
 *   core ← sql ← {node, gate}  (the SQL kit: store URLs, pools, migrations, shared tables);
 *   core ← gate ← {agent, cli, examples}  (gate never imports a VRP package; sql is plumbing, not VRP);
 *   {agent, node} ← examples  (the booking example verifies offers and starts a local node to book at)
 *
 * No cycles; no relative import out of a package (another package is reached through its public
 * entry, never its `src/` or `test/`); a package's runtime `dependencies` are exactly what its
 * `src` imports (what only its tests use is a devDependency); the private test kit is never a
 * runtime dependency and never imported from `src`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** Each package and the packages it may import directly; what those may import, it may too. */
const EDGES: Readonly<Record<string, readonly string[]>> = {
  core: [],
  sql: ['core'],
  protocol: ['core'],
  node: ['protocol', 'sql'],
  agent: ['protocol', 'gate'],
  conformance: ['node', 'agent'],
  gate: ['core', 'sql'],
  platform: ['node'],
  cli: ['conformance', 'platform', 'gate'],
  examples: ['agent', 'node'],
};
const SCOPE = '@vrpkit/';
const TESTKIT = 'testkit';

interface Manifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface PackageFacts {
  /** The short name: `node` for `@vrpkit/node`. */
  name: string;
  /** The package directory, absolute. */
  dir: string;
  manifest: Manifest;
  files: { path: string; kind: 'src' | 'test'; imports: string[] }[];
}

/** Every package a package may import from its `src`: the transitive closure of `EDGES`. */
function allowed(pkg: string): Set<string> {
  const seen = new Set<string>();
  const visit = (p: string) => {
    for (const next of EDGES[p] ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        visit(next);
      }
    }
  };
  visit(pkg);
  return seen;
}

/** `@vrpkit/node/x` → { pkg: 'node', sub: './x' }; a bare `zod/v4` → { pkg: 'zod' }; relative and `node:` → null. */
function parseSpecifier(spec: string): { vrp: boolean; pkg: string; sub: string | null } | null {
  if (spec.startsWith('.') || spec.startsWith('node:')) return null;
  const parts = spec.split('/');
  const scoped = spec.startsWith('@');
  const pkg = parts.slice(0, scoped ? 2 : 1).join('/');
  const rest = parts.slice(scoped ? 2 : 1);
  if (pkg.startsWith(SCOPE)) return { vrp: true, pkg: pkg.slice(SCOPE.length), sub: rest.length > 0 ? `./${rest.join('/')}` : null };
  return { vrp: false, pkg, sub: null };
}

/** Whether `sub` is a path the package's `exports` publishes (exact, or a `*` pattern). */
function exported(manifest: Manifest | undefined, sub: string): boolean {
  return Object.keys(manifest?.exports ?? {}).some((key) =>
    key.includes('*') ? sub.startsWith(key.slice(0, key.indexOf('*'))) : key === sub,
  );
}

function findCycle(graph: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (p: string): string[] | null => {
    if (state.get(p) === 'done') return null;
    if (state.get(p) === 'open') return [...path.slice(path.indexOf(p)), p];
    state.set(p, 'open');
    path.push(p);
    for (const next of graph.get(p) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(p, 'done');
    return null;
  };
  for (const p of graph.keys()) {
    const cycle = visit(p);
    if (cycle) return cycle;
  }
  return null;
}

/** The module a DefinitelyTyped package types: `@types/pg` → `pg`, `@types/scope__name` → `@scope/name`; anything else, itself. */
function typedModule(dep: string): string {
  if (!dep.startsWith('@types/')) return dep;
  const name = dep.slice('@types/'.length);
  return name.includes('__') ? `@${name.replace('__', '/')}` : name;
}

/** Every breach of the dependency rule in `packages`, one sentence each (empty when it holds). */
function dependencyRuleViolations(packages: PackageFacts[]): string[] {
  const out: string[] = [];
  const byName = new Map(packages.map((p) => [p.name, p]));
  const runtime = new Map<string, Set<string>>(); // package → the VRP packages its src imports
  for (const p of packages) {
    const isKit = p.name === TESTKIT;
    if (!isKit && !(p.name in EDGES)) out.push(`${p.name}: not a package of the dependency rule (add it to EDGES with its edges)`);
    const may = allowed(p.name);
    const declared = { ...p.manifest.dependencies, ...p.manifest.peerDependencies };
    const declaredAnywhere = { ...declared, ...p.manifest.devDependencies };
    const srcImports = new Set<string>();
    runtime.set(p.name, new Set());
    for (const f of p.files) {
      const where = `${p.name}/${f.path}`;
      for (const spec of f.imports) {
        if (spec.startsWith('.')) {
          const target = resolve(dirname(join(p.dir, f.path)), spec);
          if (relative(p.dir, target).startsWith(`..${sep}`) || relative(p.dir, target) === '..')
            out.push(`${where}: relative import ${spec} leaves the package (import the other package's public entry)`);
          continue;
        }
        const s = parseSpecifier(spec);
        if (!s) continue;
        if (!s.vrp) {
          if (f.kind === 'src') srcImports.add(s.pkg);
          continue;
        }
        if (s.sub !== null && s.pkg !== p.name && !exported(byName.get(s.pkg)?.manifest, s.sub))
          out.push(`${where}: ${spec} reaches into ${s.pkg}'s internals (import its public entry)`);
        if (s.pkg === p.name || isKit) continue;
        if (s.pkg === TESTKIT) {
          if (f.kind === 'src') out.push(`${where}: src imports the test kit (it is for tests only)`);
          else if (!(`${SCOPE}${TESTKIT}` in (p.manifest.devDependencies ?? {})))
            out.push(`${p.name}: its tests use @vrpkit/testkit but package.json does not list it in devDependencies`);
          continue;
        }
        if (f.kind === 'src') {
          srcImports.add(`${SCOPE}${s.pkg}`);
          runtime.get(p.name)?.add(s.pkg);
          if (!may.has(s.pkg)) out.push(`${where}: ${p.name} may not import @vrpkit/${s.pkg} (dependency rule)`);
        } else if (p.name === 'gate' && !may.has(s.pkg)) {
          out.push(`${where}: gate never imports a VRP package, not even in tests (@vrpkit/${s.pkg})`);
        } else if (!(`${SCOPE}${s.pkg}` in declaredAnywhere)) {
          out.push(`${p.name}: its tests use @vrpkit/${s.pkg} but package.json does not list it`);
        }
      }
    }
    if (isKit) {
      if (!p.manifest.private) out.push('testkit: must be private');
      if (Object.keys(p.manifest.dependencies ?? {}).length > 0) out.push('testkit: never a runtime package (devDependencies only)');
      continue;
    }
    for (const used of srcImports)
      if (!(used in declared)) out.push(`${p.name}: src imports ${used} but package.json does not list it in dependencies`);
    // A dependency may also be there to satisfy a peer of a VRP package its src imports (the MCP SDK
    // that @vrpkit/gate/proxy loads is an optional peer of gate, installed by the CLI that runs it).
    const peersOfImported = new Set(
      [...srcImports].flatMap((used) => Object.keys(byName.get(used.slice(SCOPE.length))?.manifest.peerDependencies ?? {})),
    );
    for (const dep of Object.keys(p.manifest.dependencies ?? {})) {
      if (dep === `${SCOPE}${TESTKIT}`) out.push(`${p.name}: lists @vrpkit/testkit in dependencies (devDependencies only)`);
      // `@types/x` is a runtime dependency where src imports x and the package's published declarations show its types.
      else if (!srcImports.has(dep) && !peersOfImported.has(dep) && !srcImports.has(typedModule(dep)))
        out.push(`${p.name}: dependency ${dep} is not imported by src (a dependency only the tests use is a devDependency)`);
    }
  }
  const cycle = findCycle(runtime);
  if (cycle) out.push(`cycle: ${cycle.join(' → ')}`);
  return [...new Set(out)];
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function tsFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const RESOLVED_MODULE = /\brequire\.resolve\(\s*'([^']+)'\s*\)/g;

/** The facts of every workspace package (`packages/*` and `examples`), as they are on disk. */
function repositoryFacts(): PackageFacts[] {
  const dirs = [...readdirSync(join(ROOT, 'packages')).map((d) => join(ROOT, 'packages', d)), join(ROOT, 'examples')];
  return dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const files = (['src', 'test'] as const).flatMap((kind) =>
      tsFiles(join(dir, kind)).map((file) => {
        const text = readFileSync(file, 'utf8');
        return {
          path: relative(dir, file),
          kind,
          // The compiler's own scan: static imports, re-exports, `import()` and `require()` alike; and a
          // package src resolves to read its files (the browser bundle the host console serves), `require.resolve('x')`.
          imports: [
            ...ts.preProcessFile(text, true, true).importedFiles.map((i) => i.fileName),
            ...[...text.matchAll(RESOLVED_MODULE)].map((m) => m[1] as string),
          ],
        };
      }),
    );
    return { name: manifest.name.startsWith(SCOPE) ? manifest.name.slice(SCOPE.length) : manifest.name, dir, manifest, files };
  });
}

describe('the dependency rule (layout: packages and their edges)', () => {
  it('holds for every package on disk, from the manifests and every import of src/ and test/', () => {
    const facts = repositoryFacts();
    expect(facts.map((p) => p.name)).toEqual(expect.arrayContaining(['core', 'protocol', 'node', 'agent', 'gate', 'cli', 'testkit']));
    expect(facts.flatMap((p) => p.files).length).toBeGreaterThan(100);
    expect(dependencyRuleViolations(facts)).toEqual([]);
  });

  it('the rule itself has no cycle', () => {
    expect(findCycle(new Map(Object.entries(EDGES).map(([p, next]) => [p, new Set(next)])))).toBeNull();
  });

  describe('catches each kind of breach (a synthetic layout)', () => {
    const pkg = (name: string, dependencies: string[], files: PackageFacts['files'] = [], extra: Partial<Manifest> = {}) => ({
      name,
      dir: `/repo/packages/${name}`,
      manifest: { name: `${SCOPE}${name}`, dependencies: Object.fromEntries(dependencies.map((d) => [d, '0.1.0'])), ...extra },
      files,
    });
    const src = (...imports: string[]) => ({ path: 'src/index.ts', kind: 'src' as const, imports });
    const test = (...imports: string[]) => ({ path: 'test/x.test.ts', kind: 'test' as const, imports });
    const good = () => [
      pkg('core', ['jose'], [src('jose', 'node:crypto')]),
      pkg('protocol', ['@vrpkit/core'], [src('@vrpkit/core', './x.js')], {
        exports: { '.': './src/index.ts', './schemas/*': './schemas/*' },
      }),
      pkg('node', ['@vrpkit/protocol', '@vrpkit/core'], [src('@vrpkit/protocol', '@vrpkit/core', '@vrpkit/protocol/schemas/offer.json')]),
      pkg('gate', ['@vrpkit/core'], [src('@vrpkit/core'), test('@vrpkit/gate', '@vrpkit/testkit/cli')], {
        devDependencies: { '@vrpkit/testkit': '0.1.0' },
      }),
      pkg('testkit', [], [src('@vrpkit/node', '@vrpkit/cli')], {
        private: true,
        exports: { './cli': './src/cli.ts', './node': './src/node.ts' },
        devDependencies: { '@vrpkit/node': '0.1.0' },
      }),
    ];
    const breach = (edit: (p: Map<string, PackageFacts>) => void) => {
      const layout = new Map(good().map((p) => [p.name, p as PackageFacts]));
      edit(layout);
      return dependencyRuleViolations([...layout.values()]);
    };
    const at = (layout: Map<string, PackageFacts>, name: string) => layout.get(name) as PackageFacts;

    it('a layout that keeps the rule has no violation', () => {
      expect(dependencyRuleViolations(good())).toEqual([]);
    });

    it('gate importing a VRP package, from src or from a test', () => {
      expect(
        breach((l) => {
          at(l, 'gate').files.push(src('@vrpkit/protocol'), test('@vrpkit/node'));
          at(l, 'gate').manifest.dependencies = { '@vrpkit/core': '0.1.0', '@vrpkit/protocol': '0.1.0' };
        }),
      ).toEqual([
        'gate/src/index.ts: gate may not import @vrpkit/protocol (dependency rule)',
        'gate/test/x.test.ts: gate never imports a VRP package, not even in tests (@vrpkit/node)',
      ]);
    });

    it('an edge against the arrows, and the cycle it closes', () => {
      expect(
        breach((l) => {
          at(l, 'core').files.push(src('@vrpkit/node'));
          at(l, 'core').manifest.dependencies = { jose: '6', '@vrpkit/node': '0.1.0' };
        }),
      ).toEqual(['core/src/index.ts: core may not import @vrpkit/node (dependency rule)', 'cycle: core → node → protocol → core']);
    });

    it("a relative import into another package's src or test, and a deep import of its internals", () => {
      expect(
        breach((l) => {
          at(l, 'node').files.push(
            src('../../protocol/src/offer.js'),
            test('../../gate/test/procs/common.js'),
            src('@vrpkit/core/src/jws.js'),
          );
        }),
      ).toEqual([
        "node/src/index.ts: relative import ../../protocol/src/offer.js leaves the package (import the other package's public entry)",
        "node/test/x.test.ts: relative import ../../gate/test/procs/common.js leaves the package (import the other package's public entry)",
        "node/src/index.ts: @vrpkit/core/src/jws.js reaches into core's internals (import its public entry)",
      ]);
    });

    it('a runtime dependency only the tests use, an undeclared import, and the test kit at runtime', () => {
      expect(
        breach((l) => {
          at(l, 'node').manifest.dependencies = { '@vrpkit/protocol': '0.1.0', '@vrpkit/core': '0.1.0', undici: '7' };
          at(l, 'node').files.push(test('undici'), src('yaml'), src('@vrpkit/testkit/node'));
        }),
      ).toEqual([
        'node/src/index.ts: src imports the test kit (it is for tests only)',
        'node: src imports yaml but package.json does not list it in dependencies',
        'node: dependency undici is not imported by src (a dependency only the tests use is a devDependency)',
      ]);
    });

    it('tests using the test kit or another package without listing it', () => {
      expect(
        breach((l) => {
          at(l, 'gate').manifest.devDependencies = {};
          at(l, 'node').files.push(test('@vrpkit/gate'));
        }),
      ).toEqual([
        'node: its tests use @vrpkit/gate but package.json does not list it',
        'gate: its tests use @vrpkit/testkit but package.json does not list it in devDependencies',
      ]);
    });

    it('a package the rule does not know, and a test kit that is public or has runtime dependencies', () => {
      expect(
        breach((l) => {
          l.set('billing', pkg('billing', []));
          at(l, 'testkit').manifest.private = false;
          at(l, 'testkit').manifest.dependencies = { '@vrpkit/node': '0.1.0' };
        }),
      ).toEqual([
        'testkit: must be private',
        'testkit: never a runtime package (devDependencies only)',
        'billing: not a package of the dependency rule (add it to EDGES with its edges)',
      ]);
    });
  });
});
