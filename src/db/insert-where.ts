import { getTableColumns, is, SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/**
 * `INSERT INTO table (every column) SELECT <row> WHERE condition`: the row is written only while
 * `condition` holds, decided by D1 in the statement that writes it. A read before an insert can be
 * outdated by a concurrent change (a revoke that commits in between); a condition inside the
 * insert cannot, because D1 runs one write at a time. Columns absent from `row` take their
 * defaults, as `values()` gives them; `.returning()` answers no row when the condition failed.
 */
export function insertWhere<T extends SQLiteTable>(db: Db, table: T, row: T["$inferInsert"], condition: SQL) {
  const given = row as Record<string, unknown>;
  // Every insertable column in the table's order: the order of the INSERT's column list.
  const columns = Object.entries(getTableColumns(table)).filter(([, column]) => column.generated === undefined);
  const values = columns.map(([key, column]) => {
    const value = given[key] !== undefined ? given[key] : column.defaultFn ? column.defaultFn() : column.default;
    if (value === undefined || value === null) return sql`NULL`;
    return is(value, SQL) ? value : sql.param(value, column);
  });
  return db.insert(table).select(sql`SELECT ${sql.join(values, sql`, `)} WHERE ${condition}`);
}
