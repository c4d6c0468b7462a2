/**
 * Spare package processes (bubblewrap): a process started before a package needs it, which a
 * package's first call then takes. A spare belongs to one package once taken: each package's calls
 * run in a sandbox of their own (its own pid namespace), which sees that package's snapshot and no
 * other, with fresh globals; and a host that closes leaves no spare behind. These tests need
 * bubblewrap and skip, saying why, where it can't run.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { MAX_MIRRORED_ENTRIES } from '../dist/src/process/pool/spare-mirror.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { descendantsOf } from '../dist/src/shared/process-tree.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const PROBE = fileURLToPath(new URL('../fixtures/process/spare-probe', import.meta.url));
const { sandbox } = await processEnvironment();

interface Probe {
  namespace: string;
  packages: string[];
  tmpDir: string;
  calls: number;
}

let root: string;
let host: ToolHost;

beforeEach(async ({ skip }) => {
  skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
  root = await tempDir('toolhost-process-spares-');
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'process', logger: recordingLogger() });
});

afterEach(async () => {
  await host?.close();
  if (root !== undefined) await removeDir(root);
});

/** The probe package copied as `name`, its tool named `spare_probe_<name>`. */
async function probePackage(name: string, extraFiles = 0): Promise<{ folder: string; tool: string }> {
  const folder = join(root, name);
  await cp(PROBE, folder, { recursive: true });
  if (extraFiles > 0) {
    await mkdir(join(folder, 'data'));
    await Promise.all(
      Array.from({ length: extraFiles }, (_, index) =>
        writeFile(join(folder, 'data', `${index}.txt`), `${index}`),
      ),
    );
  }
  const source = await readFile(join(folder, 'probe.js'), 'utf8');
  const tool = `spare_probe_${name}`;
  await writeFile(join(folder, 'probe.js'), source.replace("'spare_probe'", `'${tool}'`));
  const report = await host.load(folder);
  expect(report.modules.map((module) => module.state)).toEqual(['offered']);
  return { folder, tool };
}

async function probe(tool: string): Promise<Probe> {
  const outcome = await host.call(tool, {});
  expect(outcome.isError).toBe(false);
  const text = outcome.content[0]?.type === 'text' ? outcome.content[0].text : '';
  return JSON.parse(text) as Probe;
}

/** The package processes below this one (bwrap, or node running child-main). */
function packageProcesses(): number[] {
  return descendantsOf(process.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('child-main.js');
    } catch {
      return false;
    }
  });
}

describe("isolation: 'process', spare processes", () => {
  it("each package's first call runs in a sandbox of its own that sees only its own snapshot, with fresh globals, and its next call in the same one", async () => {
    const first = await probePackage('first');
    const firstProbe = await probe(first.tool);
    const second = await probePackage('second');
    const secondProbe = await probe(second.tool);
    const firstAgain = await probe(first.tool);

    // Taken from the spares: its tmp folder is the spare's own.
    expect(firstProbe.tmpDir).toContain(`${join('spares', '')}`);
    expect(secondProbe.tmpDir).toContain(`${join('spares', '')}`);
    expect(secondProbe.namespace).not.toBe(firstProbe.namespace);
    expect(firstAgain.namespace).toBe(firstProbe.namespace);
    expect(firstProbe.packages).toHaveLength(1);
    expect(secondProbe.packages).toHaveLength(1);
    expect(secondProbe.packages).not.toEqual(firstProbe.packages);
    // The second package's worker never ran the first's tool: its globals start fresh.
    expect(secondProbe.calls).toBe(1);
    expect(firstAgain.calls).toBe(2);
  });

  it('a package that cannot be placed in the spare (a snapshot too large to mirror) runs in a process of its own: its calls answer, and the next package still takes the spare', async () => {
    const large = await probePackage('large', MAX_MIRRORED_ENTRIES + 100);
    const largeProbe = await probe(large.tool);
    const largeAgain = await probe(large.tool);
    const small = await probePackage('small');
    const smallProbe = await probe(small.tool);

    expect(largeProbe.tmpDir).not.toContain(`${join('spares', '')}`);
    expect(largeProbe.packages).toHaveLength(1);
    expect(largeAgain.namespace).toBe(largeProbe.namespace);
    expect(largeAgain.calls).toBe(2);
    expect(smallProbe.tmpDir).toContain(`${join('spares', '')}`);
    expect(smallProbe.namespace).not.toBe(largeProbe.namespace);
  });

  it.skipIf(process.platform !== 'linux')(
    'a host that closes ends its spare (made again after the first call) with its package processes: none is left',
    async () => {
      const { tool } = await probePackage('only');
      await probe(tool);
      expect(packageProcesses().length).toBeGreaterThan(0);

      await host.close();

      expect(packageProcesses()).toEqual([]);
    },
  );
});
