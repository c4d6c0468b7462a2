/**
 * `toolhost serve` started as a child process, as an MCP client would start it, and the official
 * SDK client connected to it: over stdio (`StdioClientTransport`, or a recording transport that
 * keeps every byte of the server's stdout) and over Streamable HTTP. Everything waits on events
 * (a line on stderr, a process's exit), never on time.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CLI, REPO, withTier } from './cli-run.js';

export const MCP_FIXTURES = join(REPO, 'fixtures/mcp');
export const GOOD = join(MCP_FIXTURES, 'good');
export const HOSTILE = join(MCP_FIXTURES, 'hostile');

/** The environment `serve` gets: no secrets, its own TMPDIR. */
export function serveEnv(tmpDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '', TMPDIR: tmpDir, NO_COLOR: '1', ...extra };
}

/** What a process wrote on stderr so far, and a way to wait for a line. */
export class StderrLog {
  text = '';
  readonly #waiters = new Set<() => void>();

  constructor(stream: Readable) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      for (const waiter of this.#waiters) waiter();
    });
  }

  /** Resolves with the first match of `pattern` in what was written, now or once it is. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray> {
    return new Promise((resolve) => {
      const check = () => {
        const match = pattern.exec(this.text);
        if (match === null) return;
        this.#waiters.delete(check);
        resolve(match);
      };
      this.#waiters.add(check);
      check();
    });
  }
}

export interface StdioServe {
  client: Client;
  stderr: StderrLog;
  /** The `toolhost serve` process (the relay). */
  pid: number;
  /** Errors the client reported: a line on stdout that is not a JSON-RPC message would be one. */
  clientErrors: Error[];
}

/** `toolhost serve <args>` over stdio with the SDK's StdioClientTransport, connected (initialized). */
export async function startStdio(args: readonly string[], tmpDir: string): Promise<StdioServe> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...withTier(['serve', ...args])],
    env: serveEnv(tmpDir),
    cwd: REPO,
    stderr: 'pipe',
  });
  const stderr = new StderrLog(transport.stderr as Readable);
  const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
  const clientErrors: Error[] = [];
  client.onerror = (error) => clientErrors.push(error);
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('serve has no pid');
  return { client, stderr, pid, clientErrors };
}

/**
 * A client transport over a `toolhost serve` child that keeps every byte of its stdout, so a test
 * can check that all of it is protocol messages (the SDK's transport hides the raw stream). It reads
 * messages with the SDK's own ReadBuffer, as StdioClientTransport does.
 *
 * `stdout: 'fifo'` gives the server a named pipe as stdout instead of the socket Node's
 * child_process makes: a real pipe is what many clients pass (Python's subprocess, a shell), and
 * unlike a socket it can be opened again through /proc/<pid>/fd/1.
 */
export class RecordingStdioTransport implements Transport {
  readonly child: ChildProcess;
  readonly stderr: StderrLog;
  readonly stdoutChunks: Buffer[] = [];
  /** Every message read from stdout, in order, before the client handled it. */
  readonly messages: JSONRPCMessage[] = [];
  readonly #buffer = new ReadBuffer();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdout: Readable;

  constructor(
    args: readonly string[],
    tmpDir: string,
    options: {
      stdout?: 'socket' | 'fifo';
      isolation?: 'worker' | 'default';
      /** Added to (or replacing) serve's environment, PATH included. */
      env?: Record<string, string>;
    } = {},
  ) {
    let stdout: 'pipe' | number = 'pipe';
    let fifoEnd: Socket | undefined;
    if (options.stdout === 'fifo') {
      const fifo = join(tmpDir, `stdout-${process.pid}-${Date.now()}.fifo`);
      execFileSync('mkfifo', [fifo]);
      // Read and write: opening a FIFO for reading alone would wait for a writer.
      stdout = openSync(fifo, 'r+');
      fifoEnd = new Socket({ fd: stdout, readable: true, writable: false });
      unlinkSync(fifo);
    }
    this.child = spawn(process.execPath, [CLI, ...withTier(['serve', ...args], options.isolation)], {
      cwd: REPO,
      env: { ...serveEnv(tmpDir), ...options.env },
      stdio: ['pipe', stdout, 'pipe'],
    });
    this.stderr = new StderrLog(this.child.stderr as Readable);
    this.#stdout = fifoEnd ?? (this.child.stdout as Readable);
    if (fifoEnd !== undefined) this.child.once('exit', () => fifoEnd.destroy());
  }

  async start(): Promise<void> {
    this.#stdout.on('data', (chunk: Buffer) => {
      this.stdoutChunks.push(chunk);
      this.#buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.messages.push(message);
        this.onmessage?.(message);
      }
    });
    this.child.once('exit', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin?.write(serializeMessage(message));
  }

  /** Closes stdin, as a client does; the server then shuts down. */
  async close(): Promise<void> {
    this.child.stdin?.end();
  }

  /** Every line the server wrote on stdout. */
  stdoutLines(): string[] {
    return Buffer.concat(this.stdoutChunks)
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '');
  }
}

/** Resolves with the exit of `child` (at once if it already exited). */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** The direct child processes of `pid` (Linux). */
export function childPids(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .trim()
    .split(/\s+/)
    .filter((word) => word !== '')
    .map(Number);
}

/**
 * Whether a process with this pid is running. A zombie is not: it has exited, and an orphan's
 * zombie waits for init to reap it, which this process can't wait on.
 */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Resolves once `pid` is no longer running, for a process that is not this one's child (no exit
 * event to wait on). Called after an event that says it is ending (its stderr closed: the kernel
 * closes a process's files a moment before it becomes a zombie), so this is a moment, not a wait.
 */
export async function stoppedRunning(pid: number): Promise<boolean> {
  const giveUpAt = Date.now() + 30_000;
  while (processRunning(pid)) {
    if (Date.now() > giveUpAt) return false;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return true;
}

/** The host's temp folders of a process (`toolhost-<pid>-<hex>`) in `tmpDir`. */
export function hostTempDirs(tmpDir: string, pid: number): string[] {
  return readdirSync(tmpDir).filter((name) => name.startsWith(`toolhost-${pid}-`));
}

export interface HttpServe {
  child: ChildProcess;
  stderr: StderrLog;
  url: string;
}

/** `toolhost serve --http 127.0.0.1:0 <args>`, once it printed the address it listens on. */
export async function startHttp(
  args: readonly string[],
  tmpDir: string,
  env: Record<string, string> = {},
): Promise<HttpServe> {
  const child = spawn(process.execPath, [CLI, ...withTier(['serve', '--http', '127.0.0.1:0', ...args])], {
    cwd: REPO,
    env: serveEnv(tmpDir, env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr = new StderrLog(child.stderr as Readable);
  const started = await Promise.race([
    stderr.waitFor(/over MCP at (http:\/\/\S+)/),
    exited(child).then(({ code }) => {
      throw new Error(`serve exited with ${code} before listening: ${stderr.text}`);
    }),
  ]);
  return { child, stderr, url: started[1] as string };
}

/** The SDK client over Streamable HTTP, connected; `fetch` lets a test route or decorate requests. */
export async function connectHttp(
  url: string,
  options: { fetch?: typeof fetch; headers?: Record<string, string> } = {},
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.headers === undefined ? {} : { requestInit: { headers: options.headers } }),
  });
  const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
