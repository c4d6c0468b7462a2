/**
 * Hardening that reaches past the worker into the whole process, and faults whose text a tool chose:
 * OpenSSL engines are refused with addons off (our refusal, before OpenSSL ever sees the
 * path), fault messages reach the logger and the 'fault' event as escaped data, and a tool that
 * removes the worker's uncaughtException listener still gets one answer.
 */
import { getPriority, setPriority } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { boundaryFixture, TIERS, withoutTierNotice } from './support/boundary.js';
import { answered, expectHostFine, failed, nextEvent, useHosts } from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';

const _makeHost = useHosts();

describe.each(TIERS)("isolation: '%s', one host through every attack", (isolation) => {
  const shared = useSharedHost({ isolation, maxThreadsPerPool: 1 });
  async function hostWith(file: string) {
    await shared.use(boundaryFixture(file));
    return shared;
  }

  it.each([
    ['crypto.setEngine', 'crypto.setEngine is not available to tools in toolhost'],
    ['privateKeyEngine', 'the privateKeyEngine TLS option is not available to tools in toolhost'],
    ['clientCertEngine', 'the clientCertEngine TLS option is not available to tools in toolhost'],
    ['an https.Agent', 'the clientCertEngine TLS option is not available to tools in toolhost'],
  ])(
    'an OpenSSL engine asked for through %s is refused before OpenSSL sees the path',
    async (via, message) => {
      const { host } = await hostWith('call-loads-openssl-engine.js');

      expect(await host.call('call_loads_openssl_engine', { via })).toStrictEqual(
        failed('TOOL_THREW', message),
      );
      expect(await host.call('call_loads_openssl_engine', { via })).toStrictEqual(
        failed('TOOL_THREW', message),
      );
      await expectHostFine(host);
    },
  );

  it("a fault outside any call whose text carries ANSI escapes and line breaks reaches the logger and 'fault' as one escaped line", async () => {
    const { host } = await hostWith('call-faults-with-control-characters.js');
    const lines = shared.linesFromNow();
    const faults = shared.collect('fault');
    const channel = `toolhost-test-fault-${isolation}-${process.pid}`;
    const source = boundaryFixture('call-faults-with-control-characters.js');

    expect(await host.call('call_faults_with_control_characters', { channel })).toStrictEqual(
      answered('replied'),
    );
    // The call has answered: now its worker faults, outside any call.
    const fault = nextEvent(host, 'fault');
    const tell = new BroadcastChannel(channel);
    tell.postMessage('fault now');
    tell.close();
    await fault;

    const escaped =
      'a worker failed outside any call: uncaught exception: \\u001b[2J\\u001b[31mhost: all good\\r\\ntoolhost: forged line\\u0007';
    expect(faults).toStrictEqual([{ source, message: escaped }]);
    expect(withoutTierNotice(lines())).toStrictEqual([{ level: 'warn', message: `${source}: ${escaped}` }]);
    // The next call goes to a new worker, not to the one that is ending.
    const next = await host.call('call_faults_with_control_characters', { channel: `${channel}-next` });
    expect(next).toStrictEqual(answered('replied'));
    await expectHostFine(host);
  });

  it('a crash whose message carries control characters answers TOOL_CRASHED with them escaped, lines kept', async () => {
    const { host } = await hostWith('call-throws-control-characters-in-a-callback.js');

    expect(await host.call('call_throws_control_characters_in_a_callback', {})).toStrictEqual(
      failed('TOOL_CRASHED', 'uncaught exception: \\u001b[31mred\\rback\nline two\\u0007'),
    );
    await expectHostFine(host);
  });

  it.each([
    ['replace MessagePort.prototype.postMessage', "Cannot assign to read only property 'postMessage'"],
    ['redefine MessagePort.prototype.postMessage', 'Cannot redefine property: postMessage'],
    ['replace EventTarget.prototype.dispatchEvent', "Cannot assign to read only property 'dispatchEvent'"],
    ['add an accessor for a port symbol on Object.prototype', 'object is not extensible'],
    ['give worker_threads a parentPort back', "Cannot assign to read only property 'parentPort'"],
    [
      'move the internal port into a vm context',
      'toolhost: moving a MessagePort into another context is refused',
    ],
    ['post null from a vm context', 'toolhost: posting null or undefined on a MessagePort is refused'],
    [
      'hand the internal port to a nested worker',
      isolation === 'strict'
        ? 'Access to this API has been restricted'
        : "toolhost: transferring the worker's ports to the host is refused",
    ],
    [
      'transfer the internal port through structuredClone',
      "toolhost: transferring the worker's ports to the host is refused",
    ],
    [
      'post null with Reflect.apply and Function.prototype.call replaced',
      'toolhost: posting null or undefined on a MessagePort is refused',
    ],
  ])('a tool that tries to %s is refused', async (attempt, refusal) => {
    const { host } = await hostWith('call-undoes-the-lockdown.js');

    const outcome = await host.call('call_undoes_the_lockdown', { attempt });

    expect(outcome.isError).toBe(false);
    const [block] = outcome.content;
    expect(block?.type === 'text' && block.text.startsWith('refused: ')).toBe(true);
    expect(block?.type === 'text' && block.text).toContain(refusal);
    await expectHostFine(host);
  });

  it.each(['default export', 'named export'])(
    "a tool can't lower the priority of the host's main thread (os.setPriority, %s)",
    async (via) => {
      const { host } = await hostWith('call-renices-the-host.js');
      const before = getPriority(0);
      try {
        expect(await host.call('call_renices_the_host', { via })).toStrictEqual(
          failed('TOOL_THREW', 'os.setPriority is not available to tools in toolhost'),
        );
        expect(getPriority(0)).toBe(before);
      } finally {
        // Were it reniced, this suite's own process would stay slowed (as root it can be undone).
        if (getPriority(0) !== before) setPriority(0, before);
      }
      await expectHostFine(host);
    },
  );

  it("a tool that removes the worker's uncaughtException listener, then throws, gets one TOOL_CRASHED and the pool answers again", async () => {
    const { host } = await hostWith('call-removes-uncaught-listener.js');
    const crashed = failed(
      'TOOL_CRASHED',
      "the tool's worker crashed: Serializing an uncaught exception failed",
    );

    expect(await host.call('call_removes_uncaught_listener', {})).toStrictEqual(crashed);
    expect(await host.call('call_removes_uncaught_listener', {})).toStrictEqual(crashed);
    await expectHostFine(host);
  });
});
