/**
 * The code blocks of the manual that claim to run: a fenced block right after an HTML comment
 * `<!-- runs -->` or `<!-- runs: OPTION; OPTION -->` (invisible where the Markdown is rendered).
 * docs/development.md documents the options; an unknown one fails the parse, so a typo can't
 * quietly turn a check off.
 */

/** How one marked block is run (see {@link parseOptions}). */
export interface BlockOptions {
  /** The exit status the block (a shell block's last command) must end with. */
  exit: number;
  /** Repository paths copied into the block's temp folder first, each `from` to `to`. */
  copies: Array<{ from: string; to: string }>;
  /** Shell lines not run: the checkout's own steps (the suite already runs in a built checkout). */
  skip: string[];
  /** Text the block's output must contain. */
  prints: string[];
  /** A local fake Messages API: each conversation's first request calls `tool` with `input`. */
  fakeApi?: { tool: string; input: unknown };
  /** A tool module: loaded by `toolhost list` as the only module of a package, which must offer it. */
  tool: boolean;
  /** A `$` transcript whose output varies (times, paths): only the commands' exit statuses are checked. */
  outputVaries: boolean;
}

export interface RunnableBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The line of the opening fence (from 1). */
  line: number;
  /** The fence's language: `sh`, `js`, `ts`, … */
  language: string;
  code: string;
  options: BlockOptions;
}

const MARKER = /^<!-- runs(?::\s*(.*?))?\s*-->$/;
/** A fence: its backticks (three or more), then its language. */
const FENCE = /^(`{3,})(\S*)/;

/**
 * Every marked block of one Markdown file; throws naming the line of a marker that is malformed.
 * A marker inside a fenced block (an example of one, as docs/development.md shows) is text.
 */
export function runnableBlocks(file: string, markdown: string): RunnableBlock[] {
  const lines = markdown.split('\n');
  const blocks: RunnableBlock[] = [];
  let openFence: string | undefined;
  for (const [index, text] of lines.entries()) {
    const fence = FENCE.exec(text);
    if (openFence !== undefined) {
      if (fence !== null && fence[1] === openFence && fence[2] === '') openFence = undefined;
      continue;
    }
    if (fence !== null) {
      openFence = fence[1];
      continue;
    }
    const marker = MARKER.exec(text.trim());
    if (marker === null) continue;
    const where = `${file}:${index + 1}`;
    const opening = FENCE.exec(lines[index + 1] ?? '');
    if (opening === null)
      throw new Error(`${where}: a runs marker must be followed at once by a fenced block`);
    const end = lines.findIndex((candidate, at) => at > index + 1 && candidate.trimEnd() === opening[1]);
    if (end === -1) throw new Error(`${where}: the block after this runs marker never closes`);
    blocks.push({
      file,
      line: index + 2,
      language: opening[2] ?? '',
      code: lines.slice(index + 2, end).join('\n'),
      options: parseOptions(marker[1] ?? '', where),
    });
  }
  return blocks;
}

/**
 * `exit N`, `with PATH as DEST`, `skip LINE`, `prints TEXT`, `fake api: TOOL JSON`, `tool`,
 * `output varies`, separated by `;`.
 */
export function parseOptions(text: string, where: string): BlockOptions {
  const options: BlockOptions = {
    exit: 0,
    copies: [],
    skip: [],
    prints: [],
    tool: false,
    outputVaries: false,
  };
  for (const option of text.split(';').map((part) => part.trim())) {
    if (option === '') continue;
    const known = OPTIONS.find(([pattern]) => pattern.test(option));
    if (known === undefined) throw new Error(`${where}: unknown runs option "${option}"`);
    const [pattern, apply] = known;
    apply(options, (pattern.exec(option) ?? []).slice(1) as string[]);
  }
  return options;
}

const OPTIONS: Array<[RegExp, (options: BlockOptions, values: string[]) => void]> = [
  [/^exit (\d+)$/, (options, [code = '']) => (options.exit = Number(code))],
  [/^with (\S+) as (\S+)$/, (options, [from = '', to = '']) => options.copies.push({ from, to })],
  [/^skip (.+)$/, (options, [line = '']) => options.skip.push(line)],
  [/^prints (.+)$/, (options, [expected = '']) => options.prints.push(expected)],
  [
    /^fake api: (\S+) (.+)$/,
    (options, [tool = '', input = '']) => (options.fakeApi = { tool, input: JSON.parse(input) as unknown }),
  ],
  [/^tool$/, (options) => (options.tool = true)],
  [/^output varies$/, (options) => (options.outputVaries = true)],
];

/** A shell block's lines to run: without comments after `#`, blank lines and the skipped lines. */
export function shellLines(code: string, skip: readonly string[]): string[] {
  return code
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#') && !skip.includes(line));
}

/** A `$` transcript's commands, each with the output lines that follow it. */
export function transcript(code: string): Array<{ command: string; output: string[] }> {
  const steps: Array<{ command: string; output: string[] }> = [];
  for (const line of code.split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] });
    else steps.at(-1)?.output.push(line);
  }
  return steps.map(({ command, output }) => ({ command, output: trimEnd(output) }));
}

function trimEnd(lines: string[]): string[] {
  const kept = [...lines];
  while (kept.length > 0 && kept.at(-1)?.trim() === '') kept.pop();
  return kept;
}
