/**
 * A worker's start prints nothing of toolhost's own: its hardening reaches some of Node's internal
 * bindings, and the first reach to one of them makes Node warn on the worker's stderr, which the host
 * would hear as the tool's printing. A quiet tool's read and call leave no printed line, in every
 * tier, and the host's `output` event stays silent.
 */
import { describe, expect, it } from 'vitest';
import { collect, expectHostFine, loadEcho, useHosts } from './support/host-harness.js';

const makeHost = useHosts();

describe.each(['worker', 'strict', 'process'] as const)('a worker start in the %s tier', (isolation) => {
  it("prints nothing: a quiet tool's read and its calls leave no printed line", async () => {
    const { host, logger } = await makeHost({ isolation });
    const outputs = collect(host, 'output');
    await loadEcho(host);

    await expectHostFine(host);
    await expectHostFine(host, 'twice');
    expect(logger.lines.filter((line) => line.message.includes('printed'))).toStrictEqual([]);
    expect(outputs).toStrictEqual([]);
  });
});
