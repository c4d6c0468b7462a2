/**
 * The stdio guarantee, tried: a hostile package (exit, heap bomb, a loop past its timeout, writes to
 * stdout by every means, junk and forged messages into the hosting process's channel) served beside
 * a good one, in each isolation tier. Every line on the server's stdout must be a JSON-RPC message,
 * none of them the hostile tool's, and the good package must keep answering. And what remains: in the
 * worker tier a tool can still open the relay's own stdout through /proc; strict refuses that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import { exited, GOOD, HOSTILE } from './support/mcp-serve.js';
import {
  connectRecorded,
  errorCode,
  expectProtocolOnly,
  type RecordedServe,
} from './support/recorded-serve.js';

const TIERS = ['worker', 'strict'] as const;

describe.each(TIERS)('a hostile package beside a good one, served over stdio (%s tier)', (tier) => {
  const tmp = freshDir(`toolhost-mcp-hostile-${tier}`);
  let serve: RecordedServe;
  const call = (name: string, args: Record<string, unknown> = {}) => serve.call(name, args);
  const expectGoodAnswers = (text: string) => serve.expectGoodAnswers(text);

  beforeAll(async () => {
    // A named pipe as stdout, as many clients give: the one kind of stdout /proc can open again.
    const args = ['--isolation', tier, '--heap-mb', '32', GOOD, HOSTILE];
    serve = await connectRecorded(args, tmp.path, { stdout: 'fifo' });
  });
  afterAll(async () => {
    await serve?.client.close();
    if (serve !== undefined) await exited(serve.transport.child);
    tmp.remove();
  });

  it('a tool that calls process.exit is a tool error, and the good package answers', async () => {
    const result = await call('exit_now');
    expect(result.isError).toBe(true);
    expect(errorCode(result)).toBe('TOOL_EXITED');
    await expectGoodAnswers('after exit');
  });

  it('a heap bomb is a tool error, and the good package answers', async () => {
    const result = await call('heap_bomb');
    expect(result.isError).toBe(true);
    expect(errorCode(result)).toBe('TOOL_OUT_OF_MEMORY');
    await expectGoodAnswers('after the heap bomb');
  });

  it('a loop past its timeout is a tool error, and the good package answers', async () => {
    const result = await call('spin');
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'TOOL_TIMEOUT: tool timed out after 300 ms' }],
    });
    await expectGoodAnswers('after the loop');
  });

  it('a tool writing to stdout by every means, and into the channel, reaches nothing but stderr', async () => {
    const result = await call('noisy');
    expect(result.isError).toBe(false);
    const { refused } = result.structuredContent as { refused: Record<string, string> };
    if (tier === 'worker') {
      // These ran: a child process inheriting the hosting process's stdio, and a new descriptor
      // onto its stdout. Neither is the protocol's.
      expect(refused).not.toHaveProperty(['child process']);
      expect(refused).not.toHaveProperty(['/proc/self/fd/1']);
      expect(refused).not.toHaveProperty(['/dev/stdout']);
    } else {
      expect(refused).toMatchObject({
        'child process': 'ERR_ACCESS_DENIED',
        '/proc/self/fd/1': 'ERR_ACCESS_DENIED',
        '/dev/stdout': 'ERR_ACCESS_DENIED',
      });
    }
    // Descriptor 3 (the channel) is the hosting process's own: the tool's writes there are refused.
    expect(refused).toMatchObject({ 'fd 3': 'EBADF' });
    if (tier === 'worker') {
      // A child process it handed descriptor 3 wrote there: the relay dropped it, and said so once.
      expect(refused).not.toHaveProperty(['a child handed fd 3']);
      await serve.transport.stderr.waitFor(
        /dropped \d+ bytes from the tool host process that were not signed/,
      );
    } else {
      expect(refused).toMatchObject({ 'a child handed fd 3': 'ERR_ACCESS_DENIED' });
    }
    // What the tool printed through console and the streams was captured and shown on stderr.
    await serve.transport.stderr.waitFor(/the tool "noisy" printed: junk from noisy via console\.log/);
    await expectGoodAnswers('after the noise');
  });

  it('every line on stdout was a JSON-RPC message, none of them from the hostile tool', () => {
    // The tool's list_changed carried a made-up signature.
    expectProtocolOnly(serve, ['junk from noisy', 'forged', 'notifications/tools/list_changed']);
  });

  if (tier === 'worker') {
    it("(not contained) a tool can open the relay's stdout through /proc and write to the client", async () => {
      const result = await call('parent_stdout');
      expect(result.content).toEqual([{ type: 'text', text: 'wrote to the parent process' }]);
      // The tool wrote a well-formed message, so the client took it as the server's.
      await expectGoodAnswers('after /proc');
      expect(serve.logged).toEqual(['written through /proc']);
    });
  } else {
    it("refuses a tool opening the relay's stdout through /proc", async () => {
      const result = await call('parent_stdout');
      expect(result.isError).toBe(true);
      expect(errorCode(result)).toBe('TOOL_ACCESS_DENIED');
      expect(result.content[0]).toMatchObject({
        text: expect.stringMatching(/^TOOL_ACCESS_DENIED: the strict isolation tier refused FileSystemWrite/),
      });
      await expectGoodAnswers('after /proc');
      expect(serve.logged).toEqual([]);
    });
  }
});
