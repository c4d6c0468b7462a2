/**
 * Parameter schemas a hostile module declares. Schemas are plain data but the host compiles
 * them and runs their validators: `$async` is refused, an `$id` can't reach what another module or
 * host compiled, a schema too costly to compile is left out without stopping the host's event loop,
 * and reference fan-out is not inlined.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundaryFixture, locatedReason, runHostInChild, TIERS } from './support/boundary.js';
import {
  answered,
  expectHostFine,
  fixtureModule,
  loadEcho,
  statusOf,
  useHosts,
} from './support/host-harness.js';
import { removeDir, tempDir, writePackage } from './support/tool-packages.js';

const makeHost = useHosts();

for (const isolation of TIERS) {
  describe(`isolation: '${isolation}'`, () => {
    it.each([
      ['decl-schema-async.js', 'parameterSchema'],
      ['decl-schema-async-nested.js', 'parameterSchema.$defs.later'],
    ])('a schema using $async (%s) is left out, and the host still serves', async (file, at) => {
      const { host } = await makeHost({ isolation });
      await loadEcho(host);

      const report = await host.load(boundaryFixture(file));

      expect(report.modules.map((module) => [module.state, module.code, module.reason])).toEqual([
        [
          'left-out',
          'DECLARATION_INVALID',
          locatedReason(file, `parameterSchema uses \`$async\` (at ${at})`),
        ],
      ]);
      await expectHostFine(host);
    });

    it('a schema of 145 KB is left out by the default size limit', async () => {
      const { host } = await makeHost({ isolation });
      await loadEcho(host);

      const report = await host.load(boundaryFixture('decl-schema-allof-2000.js'));

      expect(report.modules.map((module) => [module.state, module.code, module.reason])).toEqual([
        [
          'left-out',
          'DECLARATION_INVALID',
          locatedReason('decl-schema-allof-2000.js', 'parameterSchema is larger than 65536 bytes'),
        ],
      ]);
      await expectHostFine(host);
    });

    it("a 145 KB schema allowed by the size limit but slow to compile is left out, and another package's calls answer during the load", async () => {
      const { host } = await makeHost({ isolation, maxSchemaBytes: 200_000, schemaCompileBudgetMs: 100 });
      await loadEcho(host);
      const order: string[] = [];

      const loading = host.load(boundaryFixture('decl-schema-allof-2000.js')).then((report) => {
        order.push('loaded');
        return report;
      });
      for (let call = 0; call < 3; call++) {
        await expectHostFine(host);
        order.push('answered');
      }
      const report = await loading;

      expect(order).toEqual(['answered', 'answered', 'answered', 'loaded']);
      // The host's own timer ended the compile: it was not compiling on the host's main thread.
      expect(report.modules.map((module) => [module.state, module.code, module.reason])).toEqual([
        [
          'left-out',
          'DECLARATION_INVALID',
          locatedReason('decl-schema-allof-2000.js', 'parameterSchema takes longer than 100 ms to compile'),
        ],
      ]);
      await expectHostFine(host);
    });

    it('a schema that refers 300 times to one definition (12 000 copies if inlined) is offered and validates', async () => {
      // 13 KB: the probe compiles it first, in about 100 ms; a loaded machine must not make it miss.
      const { host } = await makeHost({ isolation, schemaCompileBudgetMs: 30_000 });
      await loadEcho(host);

      const report = await host.load(boundaryFixture('decl-schema-shared-definition.js'));

      expect(report.modules.map((module) => module.state)).toEqual(['offered']);
      expect(await host.call('decl_schema_shared_definition', { r7: { k3: 'ok' } })).toStrictEqual(
        answered('valid'),
      );
      const invalid = await host.call('decl_schema_shared_definition', { r7: { k3: 'too long' } });
      expect(invalid.error?.code).toBe('INVALID_INPUT');
      await expectHostFine(host);
    });

    it('a schema that refers to itself in place answers INVALID_INPUT for input there, and never rejects', async () => {
      const { host } = await makeHost({ isolation });
      await loadEcho(host);
      await host.load(boundaryFixture('decl-schema-refers-to-itself.js'));

      const outcome = await host.call('decl_schema_refers_to_itself', { value: 1 });

      expect(outcome.error).toStrictEqual({
        code: 'INVALID_INPUT',
        message:
          "the input does not match the tool's parameterSchema:\n- the tool's parameterSchema could not check the input: Maximum call stack size exceeded",
      });
      expect(await host.call('decl_schema_refers_to_itself', {})).toStrictEqual(answered('ran'));
      await expectHostFine(host);
    });
  });
}

describe("a schema whose $id is the 2020-12 meta-schema's URI", () => {
  let root: string;
  beforeEach(async () => {
    root = await tempDir('toolhost-meta-id-');
  });
  afterEach(async () => {
    await removeDir(root);
  });

  const metaIdTool = (description: string) => `export const name = 'meta_id';
export const description = ${JSON.stringify(description)};
export const parameterSchema = { $id: 'https://json-schema.org/draft/2020-12/schema', type: 'object' };
export function run() { return 'ran'; }
`;

  it('unloaded or changed, it takes nothing from other modules, packages or hosts: they still compile', async () => {
    const { host } = await makeHost();
    const other = await makeHost();
    const packageDir = await writePackage(join(root, 'meta-id'), { 'meta-id.js': metaIdTool('first') });
    const first = await host.load(boundaryFixture('decl-schema-meta-schema-id.js'));
    const inPackage = await host.load(packageDir);
    // Each is offered: it was compiled by an Ajv of its own, where the URI was free.
    expect([...first.modules, ...inPackage.modules].map((module) => module.state)).toEqual([
      'offered',
      'offered',
    ]);

    // Changed (a new version is read and compiled) and unloaded (its schema is let go).
    await writeFile(join(packageDir, 'tools', 'meta-id.js'), metaIdTool('second'));
    await host.load(packageDir);
    expect(host.unload(packageDir)).toBe(true);
    expect(host.unload(boundaryFixture('decl-schema-meta-schema-id.js'))).toBe(true);

    await loadEcho(host);
    await expectHostFine(host);
    host.register({
      name: 'trusted_after_meta_id',
      description: 'registered after the meta-schema URI was claimed and let go',
      parameterSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      run: () => 'trusted',
    });
    expect(await host.call('trusted_after_meta_id', { n: 1 })).toStrictEqual(answered('trusted'));
    expect((await host.call('trusted_after_meta_id', { n: 'one' })).error?.code).toBe('INVALID_INPUT');
    const later = await host.load(fixtureModule('call-validated-input.js'));
    expect(later.modules.map((module) => statusOf(module)?.state)).toEqual(['offered']);

    await loadEcho(other.host);
    await expectHostFine(other.host);
  });
});

describe('schemas whose validators cost exponential time on the host', () => {
  let root: string;
  let killed: AbortController;
  beforeEach(async () => {
    root = await tempDir('toolhost-costly-validators-');
    killed = new AbortController();
  });
  afterEach(async () => {
    killed.abort();
    await removeDir(root);
  });

  const run = (schemaModule: string, args: unknown) =>
    runHostInChild(
      {
        load: [fixtureModule('echo.js'), boundaryFixture(schemaModule)],
        options: { dataDir: join(root, 'data') },
        concurrent: true,
        calls: [
          { tool: 'echo', args: { text: 'still fine' } },
          { tool: schemaModule.replace('.js', '').replaceAll('-', '_'), args },
        ],
        execArgv: ['--max-old-space-size=256'],
      },
      { signal: killed.signal },
    );

  // The host runs a tool's validator on its own main thread, on input the model chose. Each definition
  // here is `anyOf` two references to the next: 30 levels are 2 ** 29 paths for one value (one
  // invalid input took a 256 MB host down). Such a schema is refused when the module is read: its
  // $refs expand it past the bound.
  it("a $ref fan-out can't take the host down: the module is left out and another package's call answers", async () => {
    const outcome = await run('decl-schema-ref-fan-out.js', { chain: 'far too long for it' });

    expect(outcome.code).toBe(0);
    expect(outcome.answered).toContain('echo');
    expect(outcome.report?.loaded).toEqual(['offered', 'left-out']);
    expect(outcome.report?.outcomes[1]?.error?.code).toBe('UNKNOWN_TOOL');
  }, 30_000);

  // As above for a `pattern`: `^(a+)+$` on 40 a's and a '!' would run longer than the universe is old
  // in Node's backtracking engine. Patterns run in toolhost's linear-time matcher instead.
  it("a pattern that backtracks exponentially can't freeze the host: a crafted input is refused and another package's call answers", async () => {
    const outcome = await run('decl-schema-catastrophic-pattern.js', { word: `${'a'.repeat(40)}!` });

    expect(outcome.code).toBe(0);
    expect(outcome.answered).toContain('echo');
    expect(outcome.report?.outcomes[1]?.error?.code).toBe('INVALID_INPUT');
  }, 20_000);
});
