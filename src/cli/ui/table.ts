/**
 * A plain text table: padded columns, a header row, the last column never padded and, on a
 * terminal, cut to the screen's width.
 */
import { truncate, visibleLength } from './terminal.js';

export interface TableOptions {
  /** Cut rows to this many characters (a terminal's width). */
  maxWidth?: number | undefined;
  /** Colours a cell after it is padded (so colour codes don't upset the widths). */
  paint?: (cell: string, row: number, column: number) => string;
  header?: (cell: string) => string;
}

export function renderTable(
  headers: readonly string[],
  rows: readonly string[][],
  options: TableOptions = {},
): string {
  const widths = headers.map((header, column) =>
    Math.max(visibleLength(header), ...rows.map((row) => visibleLength(row[column] ?? ''))),
  );
  const last = headers.length - 1;
  const line = (cells: readonly string[], paint: (cell: string, column: number) => string) => {
    let prefixWidth = 0;
    const parts = cells.map((cell, column) => {
      if (column === last) {
        const room =
          options.maxWidth === undefined ? Number.POSITIVE_INFINITY : options.maxWidth - prefixWidth;
        if (cell === '') return '';
        return paint(room < Number.POSITIVE_INFINITY ? truncate(cell, Math.max(room, 10)) : cell, column);
      }
      const width = widths[column] ?? 0;
      prefixWidth += width + 2;
      return paint(cell + ' '.repeat(width - visibleLength(cell)), column);
    });
    return parts.join('  ').trimEnd();
  };
  const header = line(headers, (cell) => options.header?.(cell) ?? cell);
  const body = rows.map((row, index) =>
    line(row, (cell, column) => options.paint?.(cell, index, column) ?? cell),
  );
  return `${[header, ...body].join('\n')}\n`;
}
