/**
 * The declaration reader under attack: the module being read runs in the reader's worker,
 * so it tries to post a reply of its own, to post on Node's internal port, to blind the reader's loop,
 * and to change fields after the reader checked them. The host parses the reply it gets; a module is
 * offered under its real declaration or left out with a reason, and `load` never rejects. Each tier's
 * attacks run on one host, one after another.
 */
import { describe, expect, it } from 'vitest';
import { boundaryFixture, locatedReason, TIERS } from './support/boundary.js';
import { expectHostFine } from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';

describe.each(TIERS)("isolation: '%s', one host through every attack on its reader", (isolation) => {
  const shared = useSharedHost({ isolation });
  async function load(file: string) {
    const lines = shared.linesFromNow();
    const report = await shared.load(boundaryFixture(file));
    /** The warnings logged since this load began that contain `text`. */
    const warned = (text: string) =>
      lines()
        .filter((line) => line.level === 'warn' && line.message.includes(text))
        .map((line) => line.message);
    return { host: shared.host, report, warned };
  }

  it('a module that posts a forged reply (and null) while it is read is offered under its own declaration', async () => {
    const { host, report } = await load('decl-forges-its-reply.js');

    expect(report.modules.map((module) => [module.state, module.name])).toEqual([
      ['offered', 'decl_forges_its_reply'],
    ]);
    // parentPort is gone and the handle list refused: Node's internal port was all it found, and it
    // refused both messages.
    expect(host.list().find((tool) => tool.name === 'decl_forges_its_reply')).toStrictEqual({
      name: 'decl_forges_its_reply',
      description: 'tried 1 ports, refused 2 times',
      parameterSchema: { type: 'object' },
      timeoutMs: 30_000,
      concurrency: 'parallel',
    });
    expect(host.list().map((tool) => tool.name)).not.toContain('forged_by_module');
    await expectHostFine(host);
  });

  it("a module that posts what makes the host's Worker throw, while it is read, is refused and still offered", async () => {
    const { host, report } = await load('decl-posts-on-internal-port.js');

    expect(report.modules.map((module) => module.state)).toEqual(['offered']);
    expect(host.list().find((tool) => tool.name === 'decl_posts_on_internal_port')?.description).toBe(
      'refused 2 of 2',
    );
    await expectHostFine(host);
  });

  it.each([
    [
      'decl-blinds-the-reader.js',
      'DECLARATION_INVALID',
      "the reader's reply is malformed: its name field is malformed",
    ],
    [
      'decl-nests-a-field-after-check.js',
      'DECLARATION_INVALID',
      "the reader's reply could not be read by the host (nested too deep, or not plain data)",
    ],
    [
      'decl-makes-a-field-unplain-after-check.js',
      'DECLARATION_NOT_PLAIN',
      'parameterSchema is not plain data: parameterSchema.properties.text.examples[0] is an instance of Map',
    ],
    [
      'decl-grows-a-field-after-check.js',
      'DECLARATION_NOT_PLAIN',
      'parameterSchema is not plain data: parameterSchema is larger than 1048576 bytes',
    ],
    [
      'decl-enum-of-a-million.js',
      'DECLARATION_NOT_PLAIN',
      'parameterSchema is not plain data: parameterSchema is larger than 1048576 bytes',
    ],
    [
      'decl-name-throws-control-characters.js',
      'DECLARATION_THREW',
      `name threw: \\u001b[2J\\u001b[31mforged\\r\nline${'z'.repeat(1979)}… (98021 more characters)`,
    ],
    [
      'decl-throws-in-a-callback.js',
      'DECLARATION_CRASHED',
      'reading the declaration crashed: Serializing an uncaught exception failed',
    ],
  ])('%s is left out with %s, and the host still serves', async (file, code, reason) => {
    const { host, report, warned } = await load(file);

    expect(report.modules.map((module) => [module.state, module.code, module.reason])).toEqual([
      ['left-out', code, locatedReason(file, reason)],
    ]);
    // Logged once, as one line: the reason's own line breaks shown as escapes.
    expect(warned(reason.replaceAll('\n', '\\n'))).toHaveLength(1);
    await expectHostFine(host);
  });
});
