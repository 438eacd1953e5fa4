/** @jsxImportSource hono/jsx */
/**
 * A dashboard data table: a header row, one row per item (each cell labelled with its column, so
 * the `stack` layout shows label and value on a phone), or the `empty` text when there are none.
 * `enhance`: sortable, searchable and paged in the browser (long lists).
 */
export function DataTable<T>({ caption, head, rows, cells, empty, enhance = false }: { caption: string; head: string[]; rows: T[]; cells: (r: T) => unknown[]; empty: string; enhance?: boolean }) {
  if (!rows.length) return <p class="empty">{empty}</p>;
  return (
    <div class="table-wrap">
      <table class="stack" data-enhance={enhance || undefined} aria-label={caption}>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>
              {cells(r).map((c, i) => (
                <td data-label={head[i]}>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
