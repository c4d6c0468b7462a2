/**
 * Strict isolation and the process: no child processes, no nested workers (which would escape
 * resourceLimits), no addons, no loader-hook threads; and the in-process hardening both tiers get
 * against reaching the whole host process (signals, the inspector, V8 flags, heap snapshots).
 */
import { existsSync } from 'node:fs';
import { url as inspectorUrl } from 'node:inspector';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
/** The error result of an operation the strict tier's permission model refused. */
const denied = (permission: string, resource?: string) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the strict isolation tier refused ${permission}${resource === undefined ? '' : ` on ${resource}`}`,
});
const refused = (what: string) => ({
  code: 'TOOL_THREW',
  message: `${what} is not available to tools in toolhost`,
});

let root: string;
let host: ToolHost;

beforeEach(async () => {
  root = await tempDir('toolhost-strict-process-');
});

afterEach(async () => {
  await host?.close();
  await removeDir(root);
});

async function hostWith(
  isolation: 'worker' | 'strict' | 'process',
  options: { allowAddons?: boolean } = {},
): Promise<void> {
  host = new ToolHost({ dataDir: join(root, 'data'), isolation, logger: recordingLogger(), ...options });
  const report = await host.load(HOSTILE);
  expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
}

async function expectNextCallWorks(): Promise<void> {
  const next = await host.call('strict_tmp_roundtrip', {});
  expect(next.isError).toBe(false);
  expect(outcomeText(next)).toBe('kept in tmpDir');
}

describe("isolation: 'strict'", () => {
  it('a tool that spawns a process gets an error result and the process never runs', async () => {
    await hostWith('strict');
    const marker = join(root, 'spawned.txt');
    const outcome = await host.call('strict_spawn', { marker });
    // Newer Node releases (22.23.5, 24.22.3 and 26.12.1 here) name the executable too; Node 20 doesn't.
    const { stack: _stack, ...error } = outcome.error ?? {};
    expect([denied('ChildProcess'), denied('ChildProcess', process.execPath)]).toContainEqual(error);
    expect(existsSync(marker)).toBe(false);
    await expectNextCallWorks();
  });

  it('a tool that starts a nested worker gets an error result', async () => {
    await hostWith('strict');
    const outcome = await host.call('strict_nested_worker', {});
    expect(outcome.error).toMatchObject(denied('WorkerThreads'));
    await expectNextCallWorks();
  });

  it('a tool that registers module loader hooks (a thread of their own) gets an error result', async () => {
    await hostWith('strict');
    const outcome = await host.call('strict_register_hooks', {});
    expect(outcome.error).toMatchObject(denied('WorkerThreads'));
    await expectNextCallWorks();
  });

  it('a tool that loads a native addon gets an error result before the file is opened', async () => {
    await hostWith('strict');
    const outcome = await host.call('strict_load_addon', {});
    expect(outcome.error).toMatchObject({
      code: 'TOOL_THREW',
      message:
        "process.dlopen is not available: native addons are off for this package; allow them with --allow-addons PACKAGE (the allowAddons: ['PACKAGE'] option), or run it in the process tier in bubblewrap, where they are on",
    });
    await expectNextCallWorks();
  });

  it.skipIf(process.platform !== 'linux')(
    'with allowAddons, a strict tool reaches dlopen (the permission model lets addons through)',
    async () => {
      await hostWith('strict', { allowAddons: true });
      const outcome = await host.call('strict_load_addon', {});
      expect(outcome.error?.code).toBe('TOOL_THREW');
      expect(outcome.error?.message).toMatch(/fake-addon\.node: (invalid ELF header|file too short)$/);
    },
  );
});

describe('hardening in every tier', () => {
  for (const isolation of ['worker', 'strict', 'process'] as const) {
    it(`${isolation}: a tool that calls process.kill(process.pid) gets an error result and the host lives on`, async () => {
      await hostWith(isolation);
      const outcome = await host.call('strict_kill_host', {});
      expect(outcome.error).toMatchObject(refused('process.kill'));
      await expectNextCallWorks();
    });

    it(`${isolation}: a tool can't connect an inspector session to the host's main thread`, async () => {
      process.env['ANTHROPIC_API_KEY'] = 'sk-ant-fake-for-inspector-test';
      try {
        await hostWith(isolation);
        const outcome = await host.call('strict_inspector', {});
        expect(outcome.error).toMatchObject(refused('inspector.Session#connectToMainThread'));
        expect(outcomeText(outcome)).not.toContain('sk-ant-fake');
        expect(inspectorUrl()).toBeUndefined();
        await expectNextCallWorks();
      } finally {
        delete process.env['ANTHROPIC_API_KEY'];
      }
    });

    it(`${isolation}: a tool can't set process-wide V8 flags (and abort the host with %AbortJS)`, async () => {
      await hostWith(isolation);
      const outcome = await host.call('strict_v8_flags', {});
      expect(outcome.error).toMatchObject(refused('v8.setFlagsFromString'));
      // Had the flag been set, this process would now compile natives syntax.
      expect(() => new Function('return %IsBeingInterpreted()')).toThrow(SyntaxError);
      await expectNextCallWorks();
    });

    it(`${isolation}: a tool can't arm heap snapshots into the host's working directory`, async () => {
      await hostWith(isolation);
      const outcome = await host.call('strict_heap_snapshot', {});
      expect(outcome.error).toMatchObject(refused('v8.setHeapSnapshotNearHeapLimit'));
      await expectNextCallWorks();
    });
  }
});

describe("what the 'worker' tier does not contain (processes and threads)", () => {
  it('a tool in the worker tier can spawn a process', async () => {
    await hostWith('worker');
    const marker = join(root, 'spawned.txt');
    const outcome = await host.call('strict_spawn', { marker });
    expect(outcomeText(outcome)).toBe('spawned');
    expect(existsSync(marker)).toBe(true);
  });

  it("a tool in the worker tier can start a nested worker without the call worker's heap limit", async () => {
    await hostWith('worker');
    const outcome = await host.call('strict_nested_worker', {});
    expect(outcome.isError).toBe(false);
    const limits = JSON.parse(outcomeText(outcome)) as { callHeapLimitMb: number; nestedHeapLimitMb: number };
    expect(limits.nestedHeapLimitMb).toBeGreaterThan(limits.callHeapLimitMb);
  });

  it('a tool in the worker tier can register module loader hooks', async () => {
    await hostWith('worker');
    const outcome = await host.call('strict_register_hooks', {});
    expect(outcomeText(outcome)).toBe('registered');
  });
});
