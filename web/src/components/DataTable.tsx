import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from '@tanstack/react-table';
import type { CombinedError } from 'urql';
import { useI18n } from '../app/i18n';
import { Empty, ErrorState, Loading } from './States';

export interface PagerProps {
  page: number;
  hasPrev: boolean;
  hasNext: boolean;
  onPrev(): void;
  onNext(): void;
}

interface Props<T> {
  columns: ColumnDef<T, any>[];
  data: T[] | undefined;
  fetching: boolean;
  error?: CombinedError;
  onRetry?: () => void;
  empty?: React.ReactNode;
  pager?: PagerProps;
  rowKey?: (row: T) => string;
  testId?: string;
}

/**
 * DataTable renders one server page of rows with TanStack Table, with its
 * loading, empty and error states and the cursor pager underneath.
 */
export function DataTable<T>({ columns, data, fetching, error, onRetry, empty, pager, rowKey, testId }: Props<T>) {
  const { t } = useI18n();
  const table = useReactTable({
    data: data ?? [],
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: rowKey ? (r) => rowKey(r) : undefined,
  });
  let body: React.ReactNode = null;
  if (error && !data) body = <ErrorState error={error} onRetry={onRetry} />;
  else if (!data) body = <Loading />;
  else if (data.length === 0) body = <Empty>{empty}</Empty>;
  return (
    <div className="table-wrap" data-testid={testId}>
      {error && data && <ErrorState error={error} onRetry={onRetry} />}
      <div className={`table-scroll ${fetching && data ? 'is-refreshing' : ''}`}>
        <table className="table">
          <thead>
            {table.getHeaderGroups().map((hg) => (
              <tr key={hg.id}>
                {hg.headers.map((h) => (
                  <th key={h.id} className={(h.column.columnDef.meta as { className?: string } | undefined)?.className}>
                    {h.isPlaceholder ? null : flexRender(h.column.columnDef.header, h.getContext())}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          {!body && (
            <tbody>
              {table.getRowModel().rows.map((row) => (
                <tr key={row.id}>
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id} className={(cell.column.columnDef.meta as { className?: string } | undefined)?.className}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          )}
        </table>
        {body}
      </div>
      {pager && (data?.length || pager.hasPrev) ? (
        <div className="pager">
          <span className="pager-info">
            {t('pager.page', { n: pager.page })} · {data?.length === 1 ? t('pager.oneRow') : t('pager.rows', { n: data?.length ?? 0 })}
          </span>
          <button type="button" className="btn btn-small" disabled={!pager.hasPrev || fetching} onClick={pager.onPrev}>
            ← {t('pager.prev')}
          </button>
          <button type="button" className="btn btn-small" disabled={!pager.hasNext || fetching} onClick={pager.onNext}>
            {t('pager.next')} →
          </button>
        </div>
      ) : null}
    </div>
  );
}
