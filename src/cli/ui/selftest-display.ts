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
  if (!isInteractive(stream, options.env)) return plainDisplay(stream, style);
  const line = new SpinnerLine(stream, style, total);
  return {
    running(tool) {
      line.running.push(tool);
      line.draw();
    },
    finished(row) {
      const at = row.tool === null ? -1 : line.running.indexOf(row.tool);
      if (at !== -1) line.running.splice(at, 1);
      line.done += 1;
      line.clear();
      stream.write(finishedLine(row, style, line.width()));
      line.draw();
    },
    stop() {
      line.stop();
    },
  };
}

/** Plain lines: fixed columns, no colour codes unless colour is forced, nothing redrawn. */
function plainDisplay(stream: OutputStream, style: Style): SelftestDisplay {
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

/** The terminal's spinner line: the selftests still running, redrawn every frame until stopped. */
class SpinnerLine {
  readonly running: string[] = [];
  done = 0;
  readonly #stream: OutputStream;
  readonly #style: Style;
  readonly #total: number;
  #frame = 0;
  #drawn = false;
  readonly #timer: NodeJS.Timeout;

  constructor(stream: OutputStream, style: Style, total: number) {
    this.#stream = stream;
    this.#style = style;
    this.#total = total;
    this.#timer = setInterval(() => {
      this.#frame += 1;
      this.draw();
    }, SPINNER_INTERVAL_MS);
    this.#timer.unref();
  }

  width(): number {
    return Math.max(20, screenWidth(this.#stream) - 1);
  }

  clear(): void {
    if (this.#drawn) this.#stream.write('\r\u001b[K');
    this.#drawn = false;
  }

  draw(): void {
    this.clear();
    if (this.running.length === 0) return;
    const spinner = SPINNER[this.#frame % SPINNER.length] ?? '-';
    const line = truncate(
      `${this.done}/${this.#total} done · running ${this.running.join(', ')}`,
      this.width() - 2,
    );
    this.#stream.write(`${this.#style.cyan(spinner)} ${this.#style.dim(line)}`);
    this.#drawn = true;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.clear();
  }
}

const ICONS: Record<SelftestResult, string> = {
  passed: '✓',
  failed: '✗',
  'no-selftest': '–',
  'left-out': '!',
};

/** A finished tool's line on a terminal: icon, name, package, time, result, the reason cut to the screen. */
function finishedLine(row: SelftestRow, style: Style, width: number): string {
  const head = `${paintResult(style, row.status, ICONS[row.status])} ${rowLabel(row)} ${style.dim(row.package)}`;
  const time = row.durationMs === null ? '' : ` ${style.dim(formatDuration(row.durationMs))}`;
  const status = row.status === 'passed' ? '' : ` ${paintResult(style, row.status, resultWord(row.status))}`;
  const reason = reasonOf(row);
  const room = width - (rowLabel(row).length + row.package.length + 16);
  return `${head}${time}${status}${reason === '' ? '' : ` ${style.dim(truncate(reason, Math.max(room, 20)))}`}\n${stackOf(row, style)}`;
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
