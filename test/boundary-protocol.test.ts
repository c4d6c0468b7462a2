/**
 * Forged and garbled protocol messages: a tool shares its worker's realm with the code that
 * talks to the host, so it tries to post on every port that leads there. The ports whose listeners are
 * not ours (piscina's task port, Node's internal worker port) must be out of its reach; our own
 * messages are parsed on the host anyway. Every attack ends in one answer with a documented code, and
 * the host, the pool and another package's pool answer after it.
 */
import { describe, expect, it } from 'vitest';
import { boundaryFixture, TIERS, withoutTierNotice } from './support/boundary.js';
import { answered, expectHostFine, failed, jsonOf, loadEcho, useHosts } from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';

const makeHost = useHosts();

const REFUSED_NULL = 'toolhost: posting null or undefined on a MessagePort is refused inside tool workers';
const REFUSED_INTERNAL = "toolhost: posting on Node's internal worker port is refused inside tool workers";
const REFUSED_TRANSFER =
  "toolhost: transferring the worker's ports to the host is refused inside tool workers";
const UNSERIALIZABLE = "the tool's worker crashed: Serializing an uncaught exception failed";

describe.each(TIERS)("isolation: '%s', one host through every attack", (isolation) => {
  const shared = useSharedHost({ isolation, maxThreadsPerPool: 1 });
  async function hostWith(file: string) {
    await shared.use(boundaryFixture(file));
    return shared;
  }

  it('a tool posting null or undefined on every port it can reach is refused each time; parentPort is gone', async () => {
    const { host } = await hostWith('call-posts-null-on-its-ports.js');

    const outcome = jsonOf(await host.call('call_posts_null_on_its_ports', {}));

    expect(outcome).toStrictEqual({
      internalPorts: 1,
      attempts: [REFUSED_NULL, REFUSED_NULL, REFUSED_NULL, REFUSED_NULL],
      parentPort: ['null', 'null'],
    });
    expect(jsonOf(await host.call('call_posts_null_on_its_ports', {}))).toStrictEqual(outcome);
    await expectHostFine(host);
  });

  it("a tool can't list the process's open handles, where piscina's task port is: it gets no port", async () => {
    const { host } = await hostWith('call-reaches-for-task-port.js');

    expect(jsonOf(await host.call('call_reaches_for_task_port', {}))).toStrictEqual({
      handles: 'process._getActiveHandles is not available to tools in toolhost',
      requests: 'process._getActiveRequests is not available to tools in toolhost',
      posted: 0,
    });
    await expectHostFine(host);
  });

  it("a message the host can't deserialize, posted on piscina's task port behind a junk one, never gets there", async () => {
    const { host } = await hostWith('call-posts-undeserializable-on-task-port.js');
    const lines = shared.linesFromNow();
    const faults = shared.collect('fault');

    expect(await host.call('call_posts_undeserializable_on_task_port', {})).toStrictEqual(answered('armed'));
    expect(await host.call('call_posts_undeserializable_on_task_port', {})).toStrictEqual(
      failed('TOOL_THREW', 'process._getActiveHandles is not available to tools in toolhost'),
    );
    // piscina's listener saw nothing unexpected: no junk, no error.
    expect(faults).toEqual([]);
    expect(withoutTierNotice(lines())).toEqual([]);
    await expectHostFine(host);
  });

  const INTERNAL_MESSAGES: Array<[string, 'refused' | 'reported']> = [
    ['unknown type', 'refused'],
    ['no type', 'refused'],
    ['upAndRunning', 'refused'],
    ['loadScript', 'refused'],
    ['stdioWantsMoreData for stdin', 'refused'],
    ['stdioWantsMoreData for __proto__', 'refused'],
    ['stdioPayload for stdin', 'refused'],
    ['stdioPayload for __proto__', 'refused'],
    ['stdioPayload without chunks', 'refused'],
    ['stdioPayload with chunks not an array', 'refused'],
    ['stdioPayload with a null chunk (end of stream)', 'refused'],
    ['stdioPayload with a number chunk', 'refused'],
    ['stdioPayload with a null entry', 'refused'],
    ['stdioPayload with an unknown encoding', 'refused'],
    ["stdioPayload with a string chunk in encoding 'buffer'", 'refused'],
    // Node's report of a fatal exception: passed on in its payload-free form, which ends the worker.
    ['errorMessage with garbage', 'reported'],
    ['errorMessage without error', 'reported'],
    ['couldNotSerializeError', 'reported'],
  ];

  it.each(INTERNAL_MESSAGES)(
    "a tool posting '%s' on Node's internal worker port gets one answer and the host lives",
    async (kind, fate) => {
      const { host } = await hostWith('call-posts-on-internal-port.js');

      const outcome = await host.call('call_posts_on_internal_port', { kind });

      expect(outcome).toStrictEqual(
        fate === 'refused' ? failed('TOOL_THREW', REFUSED_INTERNAL) : failed('TOOL_CRASHED', UNSERIALIZABLE),
      );
      expect(await host.call('call_posts_on_internal_port', { kind })).toStrictEqual(outcome);
      await expectHostFine(host);
    },
  );

  it.each(['plain', 'iterator', 'index accessor'])(
    "a tool can't re-wrap Node's internal worker port through a transfer (%s)",
    async (via) => {
      const { host } = await hostWith('call-rewraps-internal-port.js');

      const outcome = jsonOf(await host.call('call_rewraps_internal_port', { via })) as {
        rewrapped: boolean;
        failure?: string;
      };

      expect(outcome.rewrapped).toBe(false);
      // The index accessor's hole gives the native call `undefined`, never the port.
      if (via !== 'index accessor') expect(outcome.failure).toBe(REFUSED_TRANSFER);
      await expectHostFine(host);
    },
  );

  it("stdio chunks posted under a prototype setter reach the host's Worker whole (no hole to throw on)", async () => {
    const { host } = await hostWith('call-holes-stdio-chunks.js');

    expect(await host.call('call_holes_stdio_chunks', {})).toStrictEqual(answered('posted two chunks'));
    expect(await host.call('call_holes_stdio_chunks', {})).toStrictEqual(answered('posted two chunks'));
    await expectHostFine(host);
  });

  it("a tool that tampers with its worker's progress count still posts at most 1000 progress messages; the reply waits for them", async () => {
    const { host } = await hostWith('call-emits-past-the-progress-cap.js');
    const progress = shared.collect('progress');

    expect(await host.call('call_emits_past_the_progress_cap', {})).toStrictEqual(answered('emitted 5000'));

    // The worker's own count is out of the tool's reach: it posted 1000, said so, and the host
    // answered once all 1000 had arrived.
    expect(progress.map((event) => event.data)).toStrictEqual(
      Array.from({ length: 1000 }, (_, index) => ({ step: index + 1 })),
    );
    await expectHostFine(host);
  });

  it('a reply that claims progress never sent is held only until the deadline, then answered once', async () => {
    const { host } = await hostWith('call-claims-unsent-progress.js');
    const progress = shared.collect('progress');

    expect(await host.call('call_claims_unsent_progress', { arm: true })).toStrictEqual(answered('armed'));
    expect(await host.call('call_claims_unsent_progress', {})).toStrictEqual(answered('claimed 5'));

    expect(progress).toEqual([]);
    expect(await host.call('call_claims_unsent_progress', {})).toStrictEqual(answered('not armed'));
    await expectHostFine(host);
  });
});

describe("isolation: 'worker' (nested workers are allowed there)", () => {
  it("a nested worker is never handed piscina's task port to post null on it", async () => {
    const { host } = await makeHost();
    await loadEcho(host);
    await host.load(boundaryFixture('call-hands-task-port-to-nested-worker.js'));

    expect(await host.call('call_hands_task_port_to_nested_worker', {})).toStrictEqual(
      failed('TOOL_THREW', 'process._getActiveHandles is not available to tools in toolhost'),
    );
    await expectHostFine(host);
  });
});
