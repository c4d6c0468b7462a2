/** A markdown table: a header row, its rule, then the rows (each a list of cells). */
export function table(columns, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(columns), line(columns.map(() => '---')), ...rows.map(line)].join('\n');
}
