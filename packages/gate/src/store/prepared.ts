/**
 * Queries on the hot path, written once with Kysely and compiled once: the query is built with
 * a marker in place of each value, compiled, and each call only binds the values in the
 * compiled parameter order. Kysely stays the one query definition for both dialects; what
 * is saved is building and compiling the query tree on every call (on the consume path that
 * was most of enforce's CPU). The SQL text then hits the SQLite driver's statement cache.
 */
import type { Compilable, CompiledQuery } from 'kysely';

const MARK = '\u0000vrpkit-param:';

/** Markers standing for the values named `K` while the query is built (typed loosely: they go where any value goes). */
export type Marks<K extends string> = { readonly [k in K]: never };

export function prepared<K extends string, O>(
  keys: readonly K[],
  build: (marks: Marks<K>) => Compilable<O>,
): (values: { readonly [k in K]: unknown }) => Compilable<O> {
  let compiled: CompiledQuery<O> | undefined;
  /** Per compiled parameter: the value name it binds, or the constant Kysely put there. */
  let binds: ({ key: K } | { constant: unknown })[] = [];
  const compileOnce = (): CompiledQuery<O> => {
    if (compiled) return compiled;
    const marks = Object.fromEntries(keys.map((k) => [k, `${MARK}${k}`])) as unknown as Marks<K>;
    const c = build(marks).compile();
    binds = c.parameters.map((p) => {
      if (typeof p !== 'string' || !p.startsWith(MARK)) return { constant: p };
      const key = p.slice(MARK.length) as K;
      if (!keys.includes(key)) throw new Error(`prepared query: unknown marker ${key}`);
      return { key };
    });
    const used = new Set(binds.flatMap((b) => ('key' in b ? [b.key] : [])));
    const unused = keys.filter((k) => !used.has(k));
    if (unused.length) throw new Error(`prepared query: values ${unused.join(', ')} are not parameters`);
    compiled = c;
    return c;
  };
  return (values) => ({
    compile() {
      const c = compileOnce();
      return { ...c, parameters: binds.map((b) => ('key' in b ? values[b.key] : b.constant)) };
    },
  });
}
