/**
 * Where in a module's source a read went wrong, for its author. For a syntax error, Node's `import()`
 * gives no location at all, so the host asks Node's own parser: `node --input-type=module --check`
 * reads the source on stdin and prints `[stdin]:LINE`, the line, and a caret under the column. It
 * only parses: nothing of the module runs. Used only when a read already failed with a syntax error.
 */
import { readFile } from 'node:fs/promises';

/** How long the check may take before the host gives up on a location. */
const CHECK_TIMEOUT_MS = 10_000;

/** The most of the checker's output the host reads. */
const MAX_OUTPUT = 65_536;

export interface SourceLocation {
  line: number;
  column: number;
}

/** The location of the first syntax error in the ES module at `file`, or undefined. Never rejects. */
export async function syntaxErrorLocation(file: string): Promise<SourceLocation | undefined> {
  const source = await readFile(file, 'utf8').catch(() => undefined);
  if (source === undefined) return undefined;
  // Loaded here: only a module that fails to parse needs it, and importing toolhost need not.
  const { spawn } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '--check'], {
      env: {},
      stdio: ['pipe', 'ignore', 'pipe'],
      timeout: CHECK_TIMEOUT_MS,
    });
    let output = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (output.length < MAX_OUTPUT) output += chunk;
    });
    child.on('error', () => resolve(undefined));
    child.on('close', () => resolve(parseCheckOutput(output)));
    child.stdin.on('error', () => {});
    child.stdin.end(source);
  });
}

/** `[stdin]:3`, the source line, then a caret under the column: the first error Node reports. */
export function parseCheckOutput(output: string): SourceLocation | undefined {
  const lines = output.split('\n');
  const at = lines.findIndex((line) => /^\[stdin\]:\d+$/.test(line));
  if (at === -1) return undefined;
  const line = Number(lines[at]?.slice('[stdin]:'.length));
  const caret = lines[at + 2]?.indexOf('^') ?? -1;
  return { line, column: caret >= 0 ? caret + 1 : 1 };
}

/**
 * Where a declaration field is defined in a module's source, found by its text (`export const name`,
 * `export function run`, or `name:` in a default-exported object), or undefined. A guess for a
 * field whose value is wrong, which has no stack to say where it is.
 */
export async function fieldLocation(file: string, field: string): Promise<SourceLocation | undefined> {
  const source = await readFile(file, 'utf8').catch(() => undefined);
  if (source === undefined) return undefined;
  const patterns = [
    new RegExp(`\\bexport\\s+(?:const|let|var|(?:async\\s+)?function\\*?)\\s+(${field})\\b`),
    new RegExp(`^\\s*(?:async\\s+)?(${field})\\s*[:(]`),
  ];
  const lines = source.split('\n');
  for (const pattern of patterns) {
    for (const [index, text] of lines.entries()) {
      const match = pattern.exec(text);
      if (match?.index !== undefined) {
        const column = text.indexOf(field, match.index) + 1;
        return { line: index + 1, column };
      }
    }
  }
  return undefined;
}
