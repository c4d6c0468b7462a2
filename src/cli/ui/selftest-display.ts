/**
 * What a selftest run shows while it runs. On a terminal (outside CI): a spinner line naming the
 * selftests still running, and a line per tool as it finishes. In a pipe or CI: only the lines, one
 * per tool, nothing redrawn. Then (in both) the summary table.
 */

import { rowLabel, type SelftestCounts, type SelftestResult, type SelftestRow } from '../selftest/results.js';
import { renderTable } from './table.js';
import {
  type CliIo,
  formatDuration,
  isInteractive,
  type OutputStream,
  oneLine,
  type Style,
  screenWidth,
  truncate,
} from './terminal.js';

export interface SelftestDisplay {
  running(tool: string): void;
  finished(row: SelftestRow): void;
  /** Clears the spinner; nothing is drawn after. */
  stop(): void;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_INTERVAL_MS = 80;

const RESULT_WORDS: Record<SelftestResult, string> = {
  passed: 'passed',
  failed: 'FAILED',
  'no-selftest': 'no selftest',
  'left-out': 'left out',
};

export function resultWord(status: SelftestResult): string {
  return RESULT_WORDS[status];
}

function paintResult(style: Style, status: SelftestResult, text: string): string {
  if (status === 'passed') return style.green(text);
  if (status === 'no-selftest') return style.yellow(text);
  return style.red(text);
}

function reasonOf(row: SelftestRow): string {
  return row.error === undefined ? '' : oneLine(`${row.error.code}: ${row.error.message}`);
}

/** Where a failed selftest failed: its stack's frames, under its line. */
function stackOf(row: SelftestRow, style: Style): string {
  const stack = row.error?.stack;
  return stack === undefined ? '' : `${style.dim(stack)}\n`;
}

export function createSelftestDisplay(options: {
  stream: OutputStream;
  env: CliIo['env'];
  style: Style;
  total: number;
}): SelftestDisplay {
  const { stream, style, total } = options;
  if (!isInteractive(stream, options.env)) {
    // Plain lines: fixed columns, no colour codes unless colour is forced, nothing redrawn.
    return {
      running() {},
      finished(row) {
        const word = resultWord(row.status).padEnd(11);
        const time = row.durationMs === null ? '' : ` ${formatDuration(row.durationMs)}`;
        const reason = reasonOf(row);
        stream.write(
          `${paintResult(style, row.status, word)} ${rowLabel(row)} (${row.package})${time}${reason === '' ? '' : `: ${reason}`}\n${stackOf(row, style)}`,
        );
      },
      stop() {},
    };
  }

  const running: string[] = [];
  let done = 0;
  let frame = 0;
  let drawn = false;
  const width = () => Math.max(20, screenWidth(stream) - 1);
  const clear = () => {
    if (drawn) stream.write('\r\u001b[K');
    drawn = false;
  };
  const draw = () => {
    clear();
    if (running.length === 0) return;
    const spinner = SPINNER[frame % SPINNER.length] ?? '-';
    const line = truncate(`${done}/${total} done · running ${running.join(', ')}`, width() - 2);
    stream.write(`${style.cyan(spinner)} ${style.dim(line)}`);
    drawn = true;
  };
  const timer = setInterval(() => {
    frame += 1;
    draw();
  }, SPINNER_INTERVAL_MS);
  timer.unref();

  const icons: Record<SelftestResult, string> = {
    passed: '✓',
    failed: '✗',
    'no-selftest': '–',
    'left-out': '!',
  };
  return {
    running(tool) {
      running.push(tool);
      draw();
    },
    finished(row) {
      const at = row.tool === null ? -1 : running.indexOf(row.tool);
      if (at !== -1) running.splice(at, 1);
      done += 1;
      clear();
      const head = `${paintResult(style, row.status, icons[row.status])} ${rowLabel(row)} ${style.dim(row.package)}`;
      const time = row.durationMs === null ? '' : ` ${style.dim(formatDuration(row.durationMs))}`;
      const status =
        row.status === 'passed' ? '' : ` ${paintResult(style, row.status, resultWord(row.status))}`;
      const reason = reasonOf(row);
      const room = width() - (rowLabel(row).length + row.package.length + 16);
      stream.write(
        `${head}${time}${status}${reason === '' ? '' : ` ${style.dim(truncate(reason, Math.max(room, 20)))}`}\n${stackOf(row, style)}`,
      );
      draw();
    },
    stop() {
      clearInterval(timer);
      clear();
    },
  };
}

/** The summary table and the counts line under it. */
export function renderSummary(options: {
  rows: readonly SelftestRow[];
  counts: SelftestCounts;
  style: Style;
  stream: OutputStream;
  env: CliIo['env'];
}): string {
  const { rows, counts, style } = options;
  const table = renderTable(
    ['TOOL', 'PACKAGE', 'RESULT', 'TIME', 'REASON'],
    rows.map((row) => [
      rowLabel(row),
      row.package,
      resultWord(row.status),
      row.durationMs === null ? '-' : formatDuration(row.durationMs),
      reasonOf(row),
    ]),
    {
      maxWidth: isInteractive(options.stream, options.env) ? screenWidth(options.stream) : undefined,
      header: (cell) => style.bold(cell),
      paint: (cell, index, column) => {
        const row = rows[index];
        return column === 2 && row !== undefined ? paintResult(style, row.status, cell) : cell;
      },
    },
  );
  const parts = [
    `${counts.passed} passed`,
    `${counts.failed} failed`,
    `${counts.noSelftest} without a selftest`,
    `${counts.leftOut} left out`,
  ];
  return `${table}\n${rows.length} ${rows.length === 1 ? 'tool' : 'tools'}: ${parts.join(', ')}\n`;
}
