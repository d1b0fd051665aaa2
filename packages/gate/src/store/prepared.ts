/**
 * Queries on the hot path, written once with Kysely and compiled once: the query is built with
 * a marker in place of each value, compiled, and each call only binds the values in the
 * compiled parameter order. Kysely stays the one query definition for both dialects; what
 * is saved is building and compiling the query tree on every call (on the consume path that
 * was most of enforce's CPU). A call is a `BoundQuery`: the SQLite driver steps its shared SQL
 * text's prepared statement with its parameters as they are, without a compiled copy per call.
 */
import type { Compilable, CompiledQuery } from 'kysely';

const MARK = '\u0000vrpkit-param:';

/** Markers standing for the values named `K` while the query is built (typed loosely: they go where any value goes). */
export type Marks<K extends string> = { readonly [k in K]: never };

/** One call of a prepared query: the query compiled once, and this call's values in its parameter order. */
export class BoundQuery<O> implements Compilable<O> {
  constructor(
    readonly compiled: CompiledQuery<O>,
    readonly parameters: readonly unknown[],
  ) {}

  /** The compiled query with this call's parameters (for Kysely's executor: PostgreSQL, async transactions). */
  compile(): CompiledQuery<O> {
    return { ...this.compiled, parameters: this.parameters };
  }
}

/**
 * Compile a query built with markers for `keys`, once: the compiled query and, per compiled
 * parameter, the index in `keys` of the value it binds (−1: a constant Kysely put there, kept in
 * the compiled parameters). Every key must be a parameter.
 */
export function compileMarked<K extends string, O>(
  keys: readonly K[],
  build: (marks: Marks<K>) => Compilable<O>,
): { compiled: CompiledQuery<O>; binds: readonly number[] } {
  const marks = Object.fromEntries(keys.map((k) => [k, `${MARK}${k}`])) as unknown as Marks<K>;
  const compiled = build(marks).compile();
  const binds = compiled.parameters.map((p) => {
    if (typeof p !== 'string' || !p.startsWith(MARK)) return -1;
    const i = keys.indexOf(p.slice(MARK.length) as K);
    if (i < 0) throw new Error(`prepared query: unknown marker ${p.slice(MARK.length)}`);
    return i;
  });
  const unused = keys.filter((_, i) => !binds.includes(i));
  if (unused.length) throw new Error(`prepared query: values ${unused.join(', ')} are not parameters`);
  return { compiled, binds };
}

export function prepared<K extends string, O>(
  keys: readonly K[],
  build: (marks: Marks<K>) => Compilable<O>,
): (values: { readonly [k in K]: unknown }) => BoundQuery<O> {
  let once: { compiled: CompiledQuery<O>; binds: readonly number[] } | undefined;
  /** A query without values has one call, shared. */
  let unbound: BoundQuery<O> | undefined;
  return (values) => {
    if (unbound) return unbound;
    once ??= compileMarked(keys, build);
    const { compiled, binds } = once;
    if (keys.length === 0) {
      unbound = new BoundQuery(compiled, compiled.parameters);
      return unbound;
    }
    const parameters = new Array<unknown>(binds.length);
    for (let i = 0; i < binds.length; i++) {
      const k = binds[i]!;
      parameters[i] = k < 0 ? compiled.parameters[i] : values[keys[k]!];
    }
    return new BoundQuery(compiled, parameters);
  };
}
