/**
 * A tool's printed lines reach an MCP client while the call runs, on the call's own stream: over
 * stdio and HTTP, for every revision serve speaks (the v2 client at 2026-07-28 asking in the call's
 * `_meta`, the v1 client and the v2 client at 2025-06-18 with `logging/setLevel`), in the worker
 * tier and, for one client each, the strict and process tiers. The proof is a handshake: the tool
 * prints where it waits and answers only once the test, having received that line, writes the
 * file it waits for. A flooding tool's messages stay bounded and escaped, and the server serves on.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir, REPO } from './support/cli-run.js';
import {
  connectHttp,
  connectStdio,
  type LogEntry,
  type McpClient,
  REVISIONS,
  type Revision,
} from './support/mcp-clients.js';
import { exited, GOOD, type HttpServe, startHttp } from './support/mcp-serve.js';

const LIVE_OUTPUT = join(REPO, 'fixtures/live-output');

type Isolation = 'worker' | 'strict' | 'process';
const cases: Array<{ transport: 'stdio' | 'http'; revision: Revision; isolation: Isolation }> = [
  ...(['stdio', 'http'] as const).flatMap((transport) =>
    REVISIONS.map((revision) => ({ transport, revision, isolation: 'worker' as const })),
  ),
  { transport: 'stdio', revision: '2026-07-28', isolation: 'strict' },
  { transport: 'http', revision: '2025-11-25', isolation: 'strict' },
  { transport: 'stdio', revision: '2025-11-25', isolation: 'process' },
  { transport: 'http', revision: '2026-07-28', isolation: 'process' },
];

const WAITING = 'waiting for ';
const from = (tool: string) => (entry: LogEntry) => entry.logger === tool;

describe.each(cases)(
  'live log messages over $transport, a $revision client, the $isolation tier',
  ({ transport, revision, isolation }) => {
    const tmp = freshDir(`toolhost-mcp-live-${transport}`);
    const served = ['--isolation', isolation, LIVE_OUTPUT, GOOD];
    let client: McpClient;
    let http: HttpServe | undefined;

    beforeAll(async () => {
      if (transport === 'stdio') {
        client = await connectStdio(revision, served, tmp.path);
      } else {
        http = await startHttp(served, tmp.path);
        client = await connectHttp(revision, http.url);
      }
    });
    afterAll(async () => {
      await client?.close();
      if (http !== undefined) {
        http.child.kill('SIGTERM');
        await exited(http.child);
      }
      tmp.remove();
    });

    it('sends nothing to a client that did not ask, and the call answers', async () => {
      expect((await client.call('print_flood', { bursts: 2, huge: false })).content).toEqual([
        { type: 'text', text: 'flooded' },
      ]);
      expect(client.logs).toEqual([]);
    });

    it('sends a printed line while the call runs, before its answer, and every line once', async () => {
      let answered = false;
      const call = client.call('print_then_wait', {}, { logLevel: 'info' }).then((result) => {
        answered = true;
        return result;
      });
      const waiting = await client.waitForLog(
        (entry) => typeof entry.data === 'string' && entry.data.startsWith(WAITING),
      );
      expect(answered).toBe(false);
      // The tool answers only once this file exists: a line held back until the answer would hang it.
      writeFileSync((waiting.data as string).slice(WAITING.length), '');
      expect((await call).content).toEqual([{ type: 'text', text: 'done' }]);
      // The last line comes with the answer; the SDK clients may hand it over a moment after it.
      await client.waitForLog((entry) => entry.data === 'released');
      expect(client.logs.filter(from('print_then_wait'))).toEqual([
        { level: 'info', logger: 'print_then_wait', data: waiting.data },
        { level: 'warning', logger: 'print_then_wait', data: 'a line on stderr' },
        { level: 'info', logger: 'print_then_wait', data: 'released' },
      ]);
    });

    it('keeps a flooding tool bounded and its control characters escaped, and serves on', async () => {
      expect((await client.call('print_flood', { bursts: 400 }, { logLevel: 'info' })).content).toEqual([
        { type: 'text', text: 'flooded' },
      ]);
      const notSent = await client.waitForLog(
        (entry) => typeof entry.data === 'string' && entry.data.startsWith('output not sent: '),
      );
      expect(notSent).toMatchObject({ level: 'warning', logger: 'print_flood' });
      const flood = client.logs.filter(from('print_flood'));
      expect(flood[0]).toEqual({
        level: 'info',
        logger: 'print_flood',
        data: '\\u001b[31mred\\u001b[0m\\rover\\u0007written',
      });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the client
      expect(flood.some((entry) => /[\u0000-\u001f\u007f-\u009f]/.test(String(entry.data)))).toBe(false);
      expect(String(flood[1]?.data)).toMatch(/^x{2000}… \(\d+ more characters\)$/);
      expect(flood.length).toBeLessThanOrEqual(1001);
      expect((await client.call('say', { text: 'after the flood' })).content).toEqual([
        { type: 'text', text: 'you said: after the flood' },
      ]);
    });
  },
);
