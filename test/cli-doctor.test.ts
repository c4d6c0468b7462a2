/**
 * `toolhost doctor`: what each tier can do on this machine, and for anything missing the exact fix.
 * Here with bubblewrap as the machine has it, without it (a PATH that lacks it), and with one that
 * refuses to make a sandbox (a stand-in that fails as bubblewrap then does); and its JSON's shape.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PERMISSION_MODEL_USABLE } from '../dist/src/calls/isolation.js';
import { freshDir, runCli, stderrLines } from './support/cli-run.js';

const tmp = freshDir('toolhost-doctor');
afterAll(() => tmp.remove());
const HAS_BWRAP = (() => {
  try {
    execFileSync('/bin/sh', ['-c', 'command -v bwrap'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const LINUX = process.platform === 'linux';
const CHECK_IDS = [
  'bubblewrap',
  'apparmor-userns',
  'user-namespaces',
  'memory-cgroup',
  'node-permission-model',
  'node-network',
  'node-working-directory',
  'store',
  'egress-proxy',
];

interface DoctorJson {
  ok: boolean;
  node: string;
  platform: string;
  defaultTier: { tier: string; sandboxed: boolean; permissionModel: boolean };
  tiers: Array<{ tier: string; default: boolean; runs: boolean; holds: string; lacks: string[] }>;
  checks: Array<{ id: string; status: string; found: string; fix?: string; tiers: string[] }>;
}

/** `toolhost doctor` with `env` (the store under the test's tmp folder, so nothing of the user's is touched). */
function doctor(args: string[], env: Record<string, string> = {}) {
  return runCli(['doctor', ...args], {
    tmpDir: tmp.path,
    env: { TOOLHOST_CACHE_DIR: join(tmp.path, 'store'), ...env },
  });
}

function checkLine(stdout: string, id: string): string | undefined {
  return stdout.split('\n').find((line) => new RegExp(`^  \\S+ +${id} `).test(line));
}

describe('toolhost doctor', () => {
  it.skipIf(!LINUX || !HAS_BWRAP)(
    'with bubblewrap: the default tier runs in its sandbox, every check is listed, exit 0',
    async () => {
      const result = await doctor([]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(
        '  process (default)  a process per package, in a bubblewrap sandbox\n',
      );
      expect(checkLine(result.stdout, 'bubblewrap')).toMatch(
        /^ {2}ok +bubblewrap +\/\S*bwrap .*made a trial sandbox/,
      );
      expect(checkLine(result.stdout, 'egress-proxy')).toMatch(
        /^ {2}ok +egress-proxy +an egress proxy started/,
      );
      expect(checkLine(result.stdout, 'store')).toBe(
        `  ok       store                   the store ${join(tmp.path, 'store')} is writable`,
      );
      for (const id of CHECK_IDS) expect(checkLine(result.stdout, id), id).toBeDefined();
      expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(
        'The default tier, process, runs at full strength here.',
      );
    },
  );

  it.skipIf(!LINUX)('without bubblewrap on PATH: the fix installs it, and the exit code is 1', async () => {
    const result = await doctor([], { PATH: '' });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((line) =>
      /^ {2}missing +bubblewrap +bubblewrap \(bwrap\) is not installed$/.test(line),
    );
    expect(at).toBeGreaterThan(-1);
    expect(lines[at + 1]?.trim()).toBe(
      'fix: install bubblewrap, on the PATH toolhost runs with: sudo apt-get install bubblewrap (Debian, Ubuntu), sudo dnf install bubblewrap (Fedora), sudo pacman -S bubblewrap (Arch), sudo apk add bubblewrap (Alpine)',
    );
    expect(result.stdout).toContain(
      PERMISSION_MODEL_USABLE
        ? "  process (default)  a process per package, under Node's permission model with strict's grants\n"
        : '  process (default)  a process per package, not confined',
    );
    expect(checkLine(result.stdout, 'egress-proxy')).toMatch(/^ {2}n\/a +egress-proxy +without a sandbox/);
    expect(lines.filter((line) => line !== '').at(-1)).toBe(
      'The default tier, process, runs here without its bubblewrap sandbox: see what is missing above.',
    );
  });

  it.skipIf(!LINUX)(
    'with a bubblewrap that refuses its sandbox: the refusal, where to look and exit 1',
    async () => {
      const folder = join(tmp.path, 'refusing');
      execFileSync('mkdir', ['-p', folder]);
      const refusal = 'bwrap: setting up uid map: Permission denied';
      writeFileSync(join(folder, 'bwrap'), `#!/bin/sh\necho ${JSON.stringify(refusal)} >&2\nexit 1\n`);
      chmodSync(join(folder, 'bwrap'), 0o755);
      const result = await doctor(['--json'], { PATH: `${folder}:${process.env['PATH'] ?? ''}` });
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as DoctorJson;
      expect(report.ok).toBe(false);
      const bubblewrap = report.checks.find((check) => check.id === 'bubblewrap');
      expect(bubblewrap).toMatchObject({
        status: 'missing',
        found: `bwrap refused to start a sandbox here: ${refusal}`,
        fix: expect.stringMatching(
          /^see the (AppArmor|user namespace|container) check below$|^see the kernel's refusal: run /,
        ),
      });
      // Whatever refused it, the check it points at carries a fix of its own.
      const pointed = /^see the (AppArmor|user namespace|container) check below$/.exec(bubblewrap?.fix ?? '');
      if (pointed !== null) {
        const id = pointed[1] === 'AppArmor' ? 'apparmor-userns' : 'user-namespaces';
        expect(report.checks.find((check) => check.id === id)).toMatchObject({
          status: 'missing',
          fix: expect.any(String),
        });
      }
    },
  );

  it('--json is one document: the default tier, three tiers, and every check with a fix where something is missing', async () => {
    const result = await doctor(['--json']);
    expect([0, 1]).toContain(result.code);
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(report.ok).toBe(result.code === 0);
    expect(report.node).toBe(process.version);
    expect(report.defaultTier).toEqual({
      tier: 'process',
      sandboxed: expect.any(Boolean),
      permissionModel: expect.any(Boolean),
    });
    expect(report.tiers.map((tier) => [tier.tier, tier.default])).toEqual([
      ['process', true],
      ['strict', false],
      ['worker', false],
    ]);
    for (const tier of report.tiers) {
      expect(tier).toEqual({
        tier: tier.tier,
        default: tier.default,
        runs: expect.any(Boolean),
        holds: expect.any(String),
        lacks: expect.any(Array),
      });
    }
    if (LINUX) expect(report.checks.map((check) => check.id)).toEqual(CHECK_IDS);
    for (const check of report.checks) {
      expect(['ok', 'missing', 'note', 'not-applicable']).toContain(check.status);
      expect(Object.keys(check).sort()).toEqual(
        check.fix === undefined
          ? ['found', 'id', 'status', 'tiers']
          : ['fix', 'found', 'id', 'status', 'tiers'],
      );
      if (check.status === 'missing' || check.status === 'note')
        expect(check.fix, check.id).toEqual(expect.any(String));
    }
  });

  it('takes no arguments: one line naming the command, exit 2', async () => {
    const result = await doctor(['./tools']);
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toEqual([
      'toolhost: doctor takes no arguments, got: ./tools (see toolhost doctor --help)',
    ]);
    expect(result.stdout).toBe('');
  });

  it('is listed in the overview and has its own help', async () => {
    const overview = await runCli(['--help'], { tmpDir: tmp.path });
    expect(overview.stdout).toContain('  toolhost doctor ');
    const help = await doctor(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: toolhost doctor \[options\]/);
    expect(help.stdout).toContain('--json');
  });
});

describe("the egress proxy's check", () => {
  it('where its folder can not be made, is a missing row with the fix (not a throw), and the next check is fine', async () => {
    const { egressCheck } = await import('../dist/src/cli/doctor/egress-check.js');
    const before = process.env['TMPDIR'];
    process.env['TMPDIR'] = '/nonexistent/toolhost-doctor-tmp';
    let failed: Awaited<ReturnType<typeof egressCheck>>;
    try {
      failed = await egressCheck(true);
    } finally {
      if (before === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = before;
    }
    expect(failed).toMatchObject({ id: 'egress-proxy', status: 'missing' });
    expect(failed.found).toContain('the egress proxy could not start: ENOENT');
    expect(failed.fix).toContain('/nonexistent/toolhost-doctor-tmp');
    expect(await egressCheck(true)).toMatchObject({ id: 'egress-proxy', status: 'ok' });
  });
});
