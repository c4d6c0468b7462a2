/**
 * The host's temp folder (`toolhost-<pid>-<hex>`: calls' tmpDirs and package snapshots) never
 * outlives it: a host that is never closed has it removed when its process exits (normally or by a
 * crash), and one left by a killed process is swept by the next host made in the same folder. A
 * folder whose process is alive is never touched.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const INDEX = fileURLToPath(new URL('../dist/src/index.js', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));

let root: string;
let parent: string;

beforeEach(async () => {
  root = await tempDir('toolhost-temp-folders-');
  parent = join(root, 'tmp');
  await mkdir(parent);
});

afterEach(async () => {
  await removeDir(root);
});

/**
 * A script that makes a host in `parent`, loads a package (a snapshot) and calls a tool that uses
 * its tmpDir, prints what `parent` holds then, and ends as `ending` says.
 */
async function hostScript(ending: string): Promise<string> {
  const script = join(root, `host-${Math.random().toString(16).slice(2)}.mjs`);
  await writeFile(
    script,
    `import { readdirSync } from 'node:fs';
import { ToolHost } from ${JSON.stringify(INDEX)};
const host = new ToolHost({ isolation: 'worker', tempRoot: ${JSON.stringify(parent)}, dataDir: ${JSON.stringify(join(root, 'data'))}, logger: { info() {}, warn() {}, error() {} } });
await host.load(${JSON.stringify(PACKAGE)});
const outcome = await host.call('strict_tmp_roundtrip', {});
console.log(JSON.stringify({ pid: process.pid, text: outcome.content[0].text, held: readdirSync(${JSON.stringify(parent)}) }));
${ending}
`,
  );
  return script;
}

interface Printed {
  pid: number;
  text: string;
  held: string[];
}

const folderOf = (pid: number) => new RegExp(`^toolhost-${pid}-[0-9a-f]{8}$`);

describe('a host that is never closed', () => {
  it('leaves no temp folder after its process exits normally', async () => {
    const script = await hostScript('// the script just ends');
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 45_000 });
    const printed = JSON.parse(stdout) as Printed;
    expect(printed.text).toBe('kept in tmpDir');
    expect(printed.held.filter((name) => folderOf(printed.pid).test(name))).toHaveLength(1);
    expect(await readdir(parent)).toEqual([]);
  });

  it('leaves no temp folder after its process crashes on an uncaught exception', async () => {
    const script = await hostScript("throw new Error('the app crashed');");
    const failure = await promisify(execFile)(process.execPath, [script], { timeout: 45_000 }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1 });
    const printed = JSON.parse((failure as { stdout: string }).stdout) as Printed;
    expect(printed.held.filter((name) => folderOf(printed.pid).test(name))).toHaveLength(1);
    expect(await readdir(parent)).toEqual([]);
  });

  it("left by a killed process, is swept by the next host; a live process's folder is not", async () => {
    const script = await hostScript('setInterval(() => {}, 1000);');
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const printed = await new Promise<Printed>((resolve) => {
      let text = '';
      child.stdout.on('data', (chunk) => {
        text += chunk;
        if (text.includes('\n')) resolve(JSON.parse(text) as Printed);
      });
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const left = (await readdir(parent)).filter((name) => folderOf(printed.pid).test(name));
    expect(left).toHaveLength(1);
    // The test runner's own parent process is alive: its folder (made up here) must stay.
    const live = `toolhost-${process.ppid}-0123abcd`;
    await mkdir(join(parent, live));

    const host = new ToolHost({
      isolation: 'worker',
      tempRoot: parent,
      dataDir: join(root, 'data'),
      logger: recordingLogger(),
    });
    await host.close();

    expect(await readdir(parent)).toEqual([live]);
  });
});
