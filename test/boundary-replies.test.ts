/**
 * Replies a tool forges or changes: it takes over piscina's handler lookup so that its own
 * function answers a call in toolhost's place, or changes its reply after the worker checked it. What
 * piscina then posts is whatever the tool made; the host parses it (or the worker's guard on piscina's
 * port replaces a reply that is not plain data) and every call answers exactly once. Each tier's
 * catalogue runs on one host, one forgery after another.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../dist/src/index.js';
import { boundaryFixture, TIERS } from './support/boundary.js';
import { answered, expectHostFine, jsonOf, loadEcho, useHosts } from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const makeHost = useHosts();
const CAP = 65_536;

const MALFORMED = "the tool's worker sent a malformed reply: ";
const CHANGED = "the tool's reply changed after it was checked: ";

/** What each forged reply answers: the code, and the message the model sees (or its start). */
const FORGERIES: Array<[string, string, string]> = [
  ['a well-formed success', 'ok', 'forged'],
  // The worker's own replies cross unwalked: they are frozen, so the changes fail and what the
  // worker made for this task (the tool's answer to `{}`) is what the host gets.
  ["toolhost's own reply, changed after it was made", 'ok', 'not armed'],
  ['null', 'TOOL_BAD_RESULT', `${MALFORMED}the reply is not an object`],
  // The common reply crosses as its text alone (workers/call/own-replies.ts): a forged string is a
  // well-formed success, as a forged well-formed reply is.
  ['a string', 'ok', 'forged'],
  ['a number', 'TOOL_BAD_RESULT', `${MALFORMED}the reply is not an object`],
  ['an array', 'TOOL_BAD_RESULT', `${MALFORMED}the reply is not an object`],
  ['a Map', 'TOOL_BAD_RESULT', `${CHANGED}$.result is an instance of Map`],
  ['a Date', 'TOOL_BAD_RESULT', `${CHANGED}$.result is an instance of Date`],
  ['a Uint8Array', 'TOOL_BAD_RESULT', `${CHANGED}$.result is an instance of Uint8Array`],
  ['ok as a string', 'TOOL_BAD_RESULT', `${MALFORMED}its ok flag is not a boolean`],
  ['no logs', 'TOOL_BAD_RESULT', `${CHANGED}$.result.logs is a undefined`],
  ['logs as a string', 'TOOL_BAD_RESULT', `${MALFORMED}its logs are not an array`],
  // Far over what the host would take: replaced in the worker, before it crosses.
  ['a million log entries', 'TOOL_BAD_RESULT', `${CHANGED}$ is larger than 589824 bytes`],
  ['logs over maxLogChars', 'TOOL_BAD_RESULT', `${MALFORMED}its logs are over the 65536-character cap`],
  ['a log entry for stdin', 'TOOL_BAD_RESULT', `${MALFORMED}a log entry is malformed`],
  ['droppedLogChars NaN', 'TOOL_BAD_RESULT', `${CHANGED}$.result.droppedLogChars is NaN`],
  ['progressSent 1e9', 'TOOL_BAD_RESULT', `${MALFORMED}its progressSent is not a count up to 1000`],
  ['progressSent -1', 'TOOL_BAD_RESULT', `${MALFORMED}its progressSent is not a count up to 1000`],
  ['content not an array', 'TOOL_BAD_RESULT', `${MALFORMED}its content is not an array`],
  ['sparse content', 'TOOL_BAD_RESULT', `${CHANGED}$.result.content is a sparse array`],
  ['a content block of an unknown type', 'TOOL_BAD_RESULT', `${MALFORMED}a content block is malformed`],
  [
    'an image that is not base64',
    'TOOL_BAD_RESULT',
    `${MALFORMED}a content block is malformed: an image's data is not base64`,
  ],
  [
    'PNG bytes labelled image/gif',
    'TOOL_BAD_RESULT',
    `${MALFORMED}a content block is malformed: an image labelled image/gif holds image/png bytes`,
  ],
  [
    'audio that is not WAV',
    'TOOL_BAD_RESULT',
    `${MALFORMED}a content block is malformed: an audio block labelled audio/wav does not start as audio/wav does`,
  ],
  [
    'structuredContent as an array',
    'TOOL_BAD_RESULT',
    `${MALFORMED}its structuredContent is not a JSON object`,
  ],
  ['an image of an unknown media type', 'TOOL_BAD_RESULT', `${MALFORMED}a content block is malformed`],
  ['isError as a number', 'TOOL_BAD_RESULT', `${MALFORMED}its isError is not a boolean`],
  ['cutBytes negative', 'TOOL_BAD_RESULT', `${MALFORMED}its cutBytes is not a count`],
  [
    'a text over maxResultBytes',
    'TOOL_BAD_RESULT',
    `${MALFORMED}it is 70016 bytes, over the ${CAP}-byte cap`,
  ],
  ['details nested 100 deep', 'TOOL_BAD_RESULT', `${CHANGED}$.result.details`],
  ['details with a BigInt', 'TOOL_BAD_RESULT', `${CHANGED}$.result.details.big is a bigint`],
  ['details with a Map', 'TOOL_BAD_RESULT', `${CHANGED}$.result.details.map is an instance of Map`],
  ['details with a Date', 'TOOL_BAD_RESULT', `${CHANGED}$.result.details.at is an instance of Date`],
  [
    'details with a typed array',
    'TOOL_BAD_RESULT',
    `${CHANGED}$.result.details.bytes is an instance of Uint8Array`,
  ],
  ['details with NaN', 'TOOL_BAD_RESULT', `${CHANGED}$.result.details.value is NaN`],
  [
    'details over maxResultBytes',
    'TOOL_BAD_RESULT',
    `${MALFORMED}its details are not plain data: details is larger`,
  ],
  ['the error code HOST_CLOSED', 'TOOL_BAD_RESULT', `${MALFORMED}its error has no known code`],
  ['the error code UNKNOWN_TOOL', 'TOOL_BAD_RESULT', `${MALFORMED}its error has no known code`],
  ['the error code INVALID_INPUT', 'TOOL_BAD_RESULT', `${MALFORMED}its error has no known code`],
  ['an error without a code', 'TOOL_BAD_RESULT', `${MALFORMED}its error has no known code`],
  ['a TOOL_THREW with a huge message', 'TOOL_THREW', `${'y'.repeat(2000)}… (298000 more characters)`],
  ['a reply nested 5000 deep', 'TOOL_BAD_RESULT', `${CHANGED}$.result.details`],
  ['a function', 'TOOL_BAD_RESULT', `${CHANGED}$.result is a function`],
  // The guard refuses the transfer, piscina reports that as an uncaught error, and the worker ends.
  [
    "a movable reply transferring Node's internal port",
    'TOOL_EXITED',
    "the tool's worker exited with code: 70",
  ],
];

function expectAnswer(outcome: ToolOutcome, code: string, message: string): void {
  if (code === 'ok') {
    expect(outcome).toStrictEqual(answered(message));
    return;
  }
  expect(outcome.isError).toBe(true);
  expect(outcome.error?.code).toBe(code);
  expect(outcome.error?.message.slice(0, message.length)).toBe(message);
  expect(outcome.content).toStrictEqual([{ type: 'text', text: outcome.error?.message }]);
}

describe.each(TIERS)("isolation: '%s', one host through every forged reply", (isolation) => {
  const shared = useSharedHost({ isolation, maxThreadsPerPool: 1, maxResultBytes: CAP });
  async function hostWith(file: string) {
    await shared.use(boundaryFixture(file));
    return shared;
  }

  it.each(FORGERIES)(
    "a reply forged through piscina's handler cache (%s) answers %s, once, and the pool recovers",
    async (forge, code, message) => {
      const { host } = await hostWith('call-hijacks-piscina-handler.js');
      const tool = 'call_hijacks_piscina_handler';

      expect(await host.call(tool, { forge })).toStrictEqual(answered('armed'));
      expectAnswer(await host.call(tool, {}), code, message);

      expect(await host.call(tool, {})).toStrictEqual(answered('not armed'));
      await expectHostFine(host);
    },
  );

  it('a forged error message is data: control characters escaped, lines kept, cut to 2000 characters', async () => {
    const { host } = await hostWith('call-hijacks-piscina-handler.js');
    const tool = 'call_hijacks_piscina_handler';

    await host.call(tool, { forge: 'a TOOL_THREW with control characters' });
    const outcome = await host.call(tool, {});

    expect(outcome.error).toStrictEqual({
      code: 'TOOL_THREW',
      message: '\\u001b[2J\\u001b[31mred\\rover\nline two\\u0007',
    });
    await expectHostFine(host);
  });

  it('a forged __proto__ key in a reply or its details pollutes no prototype on the host', async () => {
    const { host } = await hostWith('call-hijacks-piscina-handler.js');
    const tool = 'call_hijacks_piscina_handler';

    for (const forge of ['a reply with a __proto__ key', 'details with a __proto__ key']) {
      expect(await host.call(tool, { forge })).toStrictEqual(answered('armed'));
      const outcome = await host.call(tool, {});
      expect(outcome.isError).toBe(false);
      expect(outcome.content).toStrictEqual([{ type: 'text', text: 'forged' }]);
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    await expectHostFine(host);
  });

  it.each([
    ['grow details', `${MALFORMED}its details are not plain data: details is larger than ${CAP} bytes`],
    ['grow logs', `${MALFORMED}its logs are over the 65536-character cap`],
    ['nest details', `${CHANGED}$.result.details.note`],
    // A walk with `for...of` would have seen no key of the details, and passed them on.
    ['nest details past a blinded walk', `${CHANGED}$.result.details.note`],
    // Measured as the JSON it would be, each shared reference again.
    ['share details', `${MALFORMED}its details are not plain data: details is larger than ${CAP} bytes`],
  ])('a reply changed after the worker checked it (%s) answers TOOL_BAD_RESULT', async (change, message) => {
    const { host } = await hostWith('call-changes-reply-after-check.js');
    const outputs = shared.collect('output');

    const outcome = await host.call('call_changes_reply_after_check', { change, cap: CAP });

    expectAnswer(outcome, 'TOOL_BAD_RESULT', message);
    expect(outputs).toEqual([]);
    await expectHostFine(host);
  });
});

describe("two replies on the host at once, one it can't deserialize (isolation: 'worker')", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('toolhost-race-');
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  it.each([
    ['', false],
    [', its array iterator replaced to blind the check', true],
  ])(
    "piscina's listener never reads a reply the host can't deserialize%s: the host lives, each call answers once",
    async (_, blind) => {
      const { host } = await makeHost({ maxThreadsPerPool: 2 });
      await loadEcho(host);
      await host.load(boundaryFixture('call-races-an-undeserializable-reply.js'));
      const tool = 'call_races_an_undeserializable_reply';
      const started = (count: number) =>
        new Promise<void>((resolve) => {
          let seen = 0;
          const listener = () => {
            seen += 1;
            if (seen < count) return;
            host.off('progress', listener);
            resolve();
          };
          host.on('progress', listener);
        });
      // Two workers, made one after the other (piscina handles their replies in that order): two calls
      // that wait for each other.
      const warmGo = join(dir, 'warm');
      const bothWarm = started(2);
      const warming = [host.call(tool, { go: warmGo }), host.call(tool, { go: warmGo })];
      await bothWarm;
      writeFileSync(warmGo, '');
      const warm = (await Promise.all(warming)).map(
        (outcome) => (jsonOf(outcome) as { threadId: number }).threadId,
      );
      expect(new Set(warm).size).toBe(2);
      const [early, late] = [Math.min(...warm), Math.max(...warm)];
      const go = join(dir, 'go');
      const bothStarted = started(2);

      const calls = [
        host.call(tool, { dir, go, deepThreadId: late, blind }),
        host.call(tool, { dir, go, deepThreadId: late, blind }),
      ];
      await bothStarted;
      // Both calls wait for `go`. The host's main thread stays busy until both workers have posted, so
      // the two replies wait on the host together.
      writeFileSync(go, '');
      const nap = new Int32Array(new SharedArrayBuffer(4));
      while (!existsSync(join(dir, String(early))) || !existsSync(join(dir, String(late)))) {
        Atomics.wait(nap, 0, 0, 1);
      }
      const outcomes = await Promise.all(calls);

      const texts = outcomes.map((outcome) => outcome.error?.message ?? outcome.content[0]);
      expect(texts).toContainEqual({ type: 'text', text: `thread ${early}` });
      const failedOutcome = outcomes.find((outcome) => outcome.isError);
      expect(failedOutcome?.error?.code).toBe('TOOL_BAD_RESULT');
      expect(failedOutcome?.error?.message).toMatch(
        /^the tool.s reply changed after it was checked: \$.result.details.note/,
      );
      await expectHostFine(host);
    },
  );
});
