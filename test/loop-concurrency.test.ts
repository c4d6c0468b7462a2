import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { runTools } from '../dist/src/index.js';
import { body, deferred, loopTool, reply, text, toolUse, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();

function resultsOfTurn(): ToolResultBlockParam[] {
  return fake.api.body(1).messages[2]?.content as ToolResultBlockParam[];
}

/** A tool that counts how many of its calls run at the same time. */
function counted() {
  const stats = { running: 0, peak: 0 };
  const tool = loopTool('work', async () => {
    stats.running++;
    stats.peak = Math.max(stats.peak, stats.running);
    // Yield a few event-loop turns so that calls that may overlap do.
    for (let turn = 0; turn < 3; turn++) await yieldToEventLoop();
    stats.running--;
    return 'done';
  });
  return { tool, stats };
}

describe('runTools: concurrency', () => {
  it('runs parallel calls at once; they may finish out of order, but the results keep the calls order', async () => {
    const fastDone = deferred();
    const finished: string[] = [];
    const slow = loopTool('slow', async () => {
      await fastDone.promise;
      finished.push('slow');
      return 'slow result';
    });
    const fast = loopTool('fast', () => {
      finished.push('fast');
      fastDone.resolve();
      return 'fast result';
    });
    fake.api.script(
      reply([toolUse('slow', {}, 'toolu_1'), toolUse('fast', {}, 'toolu_2')]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { tools: [slow, fast] });

    expect(finished).toEqual(['fast', 'slow']);
    expect(resultsOfTurn()).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'slow result' }] },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'fast result' }] },
    ]);
  });

  it('runs at most 4 calls of a turn at once by default', async () => {
    const { tool, stats } = counted();
    fake.api.script(reply(Array.from({ length: 7 }, () => toolUse('work', {}))), reply([text('ok')]));

    await runTools(fake.client, body(), { tools: [tool] });

    expect(stats.peak).toBe(4);
    expect(resultsOfTurn()).toHaveLength(7);
  });

  it('runs at most maxConcurrency calls at once', async () => {
    const { tool, stats } = counted();
    fake.api.script(reply(Array.from({ length: 6 }, () => toolUse('work', {}))), reply([text('ok')]));

    await runTools(fake.client, body(), { tools: [tool], maxConcurrency: 2 });

    expect(stats.peak).toBe(2);
  });

  it('runs every call of a turn with an exclusive tool one at a time, in the model order', async () => {
    const log: string[] = [];
    const step = (name: string) => async () => {
      log.push(`start ${name}`);
      await yieldToEventLoop();
      log.push(`end ${name}`);
      return name;
    };
    const tools = [
      loopTool('read', step('read')),
      loopTool('write', step('write'), { concurrency: 'exclusive' }),
      loopTool('list', step('list')),
    ];
    fake.api.script(
      reply([toolUse('read', {}), toolUse('write', {}), toolUse('list', {}), toolUse('read', {})]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { tools });

    expect(log).toEqual([
      'start read',
      'end read',
      'start write',
      'end write',
      'start list',
      'end list',
      'start read',
      'end read',
    ]);
    expect(resultsOfTurn().map((result) => result.content)).toEqual(
      ['read', 'write', 'list', 'read'].map((name) => [{ type: 'text', text: name }]),
    );
  });

  it('runs the same tools in parallel again in a turn without the exclusive one', async () => {
    const { tool, stats } = counted();
    const exclusive = loopTool('exclusive', () => 'x', { concurrency: 'exclusive' });
    fake.api.script(
      reply([toolUse('work', {}), toolUse('exclusive', {}), toolUse('work', {})]),
      reply([toolUse('work', {}), toolUse('work', {})]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { tools: [tool, exclusive] });

    expect(stats.peak).toBe(2);
  });
});

describe('runTools: toolTimeoutMs', () => {
  it('answers "tool timed out after N ms" for a call over it, aborts its signal, and the loop goes on', async () => {
    const aborted = deferred<unknown>();
    const hang = loopTool('hang', (_input, context) => {
      context.signal.addEventListener('abort', () => aborted.resolve(context.signal.reason));
      return new Promise<string>(() => {});
    });
    const quick = loopTool('quick', () => 'quick result');
    fake.api.script(
      reply([toolUse('hang', {}, 'toolu_h'), toolUse('quick', {}, 'toolu_q')]),
      reply([text('ok')]),
    );

    const { response } = await runTools(fake.client, body(), { tools: [hang, quick], toolTimeoutMs: 150 });

    expect(response.content).toEqual([{ type: 'text', text: 'ok', citations: null }]);
    expect(resultsOfTurn()).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_h',
        content: [{ type: 'text', text: 'tool timed out after 150 ms' }],
        is_error: true,
      },
      { type: 'tool_result', tool_use_id: 'toolu_q', content: [{ type: 'text', text: 'quick result' }] },
    ]);
    expect(await aborted.promise).toMatchObject({
      name: 'TimeoutError',
      message: 'tool timed out after 150 ms',
    });
  });

  it('answers at the deadline even when the tool ignores its signal', async () => {
    const stubborn = loopTool('stubborn', () => new Promise<string>(() => {}));
    fake.api.script(reply([toolUse('stubborn', {})]), reply([text('ok')]));

    await runTools(fake.client, body(), { tools: [stubborn], toolTimeoutMs: 100 });

    expect(resultsOfTurn()).toMatchObject([
      { content: [{ type: 'text', text: 'tool timed out after 100 ms' }], is_error: true },
    ]);
  });

  it('leaves a call that finishes in time alone', async () => {
    fake.api.script(reply([toolUse('t', {})]), reply([text('ok')]));

    await runTools(fake.client, body(), {
      tools: [loopTool('t', async () => 'in time')],
      toolTimeoutMs: 30_000,
    });

    expect(resultsOfTurn()).toMatchObject([{ content: [{ type: 'text', text: 'in time' }] }]);
    expect(resultsOfTurn()[0]).not.toHaveProperty('is_error');
  });
});
