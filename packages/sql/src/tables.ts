/**
 * Tables defined once as data and created by one helper, so a table two stores hold (a node's
 * calendar and keys, and the same per tenant on a platform) is written once: the platform's copy
 * is the node's with a `domain` column (issue 31 item 2). Only portable column types and the
 * portable schema builder are used, so one definition creates the same table on SQLite and PostgreSQL.
 */
import type { Kysely } from 'kysely';

export interface ColumnSpec {
  type: 'text' | 'integer';
  notNull?: true;
  primaryKey?: true;
  unique?: true;
  defaultTo?: string | number;
  /** `table.column` this column refers to; rows go with the row they refer to. */
  references?: string;
}

/** A table's columns, in order. */
export type Columns = Readonly<Record<string, ColumnSpec>>;

export interface TableOptions {
  /** A primary key over several columns (named `<table>_pk`) instead of one column's. */
  primaryKey?: readonly string[];
  /** Keep a table already there (a migration that may run again over what it made). */
  ifNotExists?: true;
}

/** Create `table` with `columns` (see `ColumnSpec`). */
export async function createTable(db: Kysely<unknown>, table: string, columns: Columns, o: TableOptions = {}): Promise<void> {
  let builder = o.ifNotExists ? db.schema.createTable(table).ifNotExists() : db.schema.createTable(table);
  for (const [name, c] of Object.entries(columns)) {
    builder = builder.addColumn(name, c.type, (col) => {
      let b = col;
      if (c.primaryKey) b = b.primaryKey();
      if (c.notNull) b = b.notNull();
      if (c.unique) b = b.unique();
      if (c.defaultTo !== undefined) b = b.defaultTo(c.defaultTo);
      if (c.references) b = b.references(c.references).onDelete('cascade');
      return b;
    });
  }
  // Kysely types key columns from the columns added at compile time; these come from data.
  if (o.primaryKey) builder = builder.addPrimaryKeyConstraint(`${table}_pk`, [...o.primaryKey] as never[]);
  await builder.execute();
}

/** `columns` with `added` inserted right after the column `after`. */
export function withColumnsAfter(columns: Columns, after: string, added: Columns): Columns {
  return Object.fromEntries(Object.entries(columns).flatMap((entry) => (entry[0] === after ? [entry, ...Object.entries(added)] : [entry])));
}

/**
 * A store's table as one tenant's rows among many: a not-null `domain` column referring to
 * `tenantKey` (the tenant's row; its rows go with it). With `key: 'store-wide'` (a random id or
 * key id) the table keeps its key and takes `domain` right after it; with `key: 'per-tenant'` (a
 * name its owner chose, unique only within one tenant) it is keyed by `(domain, key)`, `domain` first.
 */
export function perTenant(
  columns: Columns,
  o: { tenantKey: string; key: 'store-wide' | 'per-tenant' },
): { columns: Columns; options: TableOptions } {
  const [first, ...rest] = Object.entries(columns);
  if (!first?.[1].primaryKey) throw new TypeError('perTenant: the first column is the primary key');
  const domain: Columns = { domain: { type: 'text', notNull: true, references: o.tenantKey } };
  if (o.key === 'store-wide') return { columns: withColumnsAfter(columns, first[0], domain), options: {} };
  const { primaryKey: _, ...key } = first[1];
  return {
    columns: { ...domain, [first[0]]: { ...key, notNull: true }, ...Object.fromEntries(rest) },
    options: { primaryKey: ['domain', first[0]] },
  };
}
