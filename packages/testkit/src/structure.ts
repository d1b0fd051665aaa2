/**
 * The repository's structure facts, read from the TypeScript on disk: the import graph between
 * files (every package's `src/` and `test/`, `examples/`, `bench/`), the `instanceof` tests of a
 * concrete store, and the length of every function in `packages/*\/src`.
 *
 * `structure.test.ts` holds the limits; `npx tsx packages/testkit/src/structure.ts` prints the
 * report (the circles, the downcasts and the longest functions) for whoever is cutting them down.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A function-like node of `packages/*\/src` and its length in lines (first to last line, inclusive). */
export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** An `x instanceof SomeStore` outside the file that declares `SomeStore`. */
export interface Downcast {
  file: string;
  line: number;
  className: string;
}

function tsFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    if (n === 'node_modules' || n === 'dist' || n === 'results') return [];
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every TypeScript file the structure rules read, absolute. */
export function repositoryFiles(root = REPOSITORY_ROOT): string[] {
  const packages = readdirSync(join(root, 'packages')).flatMap((d) =>
    ['src', 'test'].flatMap((kind) => tsFiles(join(root, 'packages', d, kind))),
  );
  return [...packages, ...tsFiles(join(root, 'examples')), ...tsFiles(join(root, 'bench'))];
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

/** `./x.js` from `dir` → the `.ts` file on disk it names (or `x/index.ts`), else null. */
function resolveRelative(fromFile: string, spec: string, known: Set<string>): string | null {
  const base = resolve(dirname(fromFile), spec);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.ts$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => known.has(c)) ?? null;
}

/**
 * The file import graph: relative imports and re-exports of every kind, `import type` included (a
 * circle through types is still a circle a reader walks), dynamic `import()` too.
 */
export function importGraph(files: readonly string[]): Map<string, Set<string>> {
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const edges = new Set<string>();
    for (const imported of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const target = resolveRelative(file, imported.fileName, known);
      if (target && target !== file) edges.add(target);
    }
    graph.set(file, edges);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
export function importCircles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, indices.get(w) as number));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return out;
}

function functionName(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(sf).replace(/\s+/g, '').slice(0, 50)})`;
  return '(anonymous)';
}

/** The length of every function, method, accessor, constructor and arrow function in the files. */
export function functionLengths(files: readonly string[], root = REPOSITORY_ROOT): FunctionLength[] {
  const out: FunctionLength[] = [];
  for (const file of files) {
    const sf = parse(file);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        out.push({ file: relative(root, file), name: functionName(node, sf), line: first + 1, lines: last - first + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out.sort((a, b) => b.lines - a.lines);
}

/** Class names that end in `Store` and the file that declares each. */
function storeClasses(files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of files) {
    const sf = parse(file);
    const visit = (node: ts.Node) => {
      if (ts.isClassDeclaration(node) && node.name && /Store$/.test(node.name.text)) out.set(node.name.text, file);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/** Every `instanceof` of a concrete store class outside the file that declares it. */
export function storeDowncasts(files: readonly string[], root = REPOSITORY_ROOT): Downcast[] {
  const classes = storeClasses(files);
  const out: Downcast[] = [];
  for (const file of files) {
    const sf = parse(file);
    const visit = (node: ts.Node) => {
      if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword) {
        const className = node.right.getText(sf);
        const home = classes.get(className);
        if (home && home !== file)
          out.push({ file: relative(root, file), line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, className });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/** The `src` files of every package. */
export function sourceFiles(root = REPOSITORY_ROOT): string[] {
  return readdirSync(join(root, 'packages')).flatMap((d) => tsFiles(join(root, 'packages', d, 'src')));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = repositoryFiles();
  const circles = importCircles(importGraph(files));
  process.stdout.write(`import circles: ${circles.length}\n`);
  for (const c of circles) process.stdout.write(`  ${c.map((f) => relative(REPOSITORY_ROOT, f)).join(' ↔ ')}\n`);
  const downcasts = storeDowncasts(files);
  process.stdout.write(`store downcasts: ${downcasts.length}\n`);
  for (const d of downcasts) process.stdout.write(`  ${d.file}:${d.line} instanceof ${d.className}\n`);
  const lengths = functionLengths(sourceFiles()).filter((f) => f.lines > 80);
  process.stdout.write(`functions over 80 lines in packages/*/src: ${lengths.length}\n`);
  for (const f of lengths) process.stdout.write(`  ${f.lines.toString().padStart(4)}  ${f.file}:${f.line} ${f.name}\n`);
}
