/**
 * Secrets on the host's side, in every tier: bindings checked when a manifest is read (a bad one is
 * a clear error, and nothing else breaks), the thread tiers leaving out a package that binds a
 * granted secret (naming the process tier) unless the host hands values there on purpose, every
 * granted value redacted from what leaves the host, and the lock recording bindings (names and
 * hosts, never values) and naming a changed one.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, ToolHostError, type ToolOutcome } from '../dist/src/index.js';
import { runCli } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { writeSecretTools } from './support/secret-servers.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const VALUE = 'sk-live-the-real-value-123456';
const PORTS = { https: 8443, http: 8080 };
let root: string;
let hosts: ToolHost[] = [];

beforeAll(async () => {
  root = await tempDir('toolhost-secrets-host-');
});

afterAll(async () => {
  await Promise.all(hosts.map((host) => host.close()));
  hosts = [];
  await removeDir(root);
});

function makeHost(options: ConstructorParameters<typeof ToolHost>[0] = {}): ToolHost {
  const host = new ToolHost({ dataDir: join(root, 'data'), logger: recordingLogger(), ...options });
  hosts.push(host);
  return host;
}

/** The secret tools with their manifest's permissions changed by `edit`. */
async function secretTools(folder: string, edit?: (permissions: Record<string, unknown>) => void) {
  await writeSecretTools(join(root, folder), PORTS);
  const file = join(root, folder, 'package.json');
  const manifest = JSON.parse(await readFile(file, 'utf8'));
  edit?.(manifest.toolhost.permissions);
  await writeFile(file, JSON.stringify(manifest));
  return join(root, folder);
}

const loadError = async (host: ToolHost, path: string) => {
  try {
    await host.load(path);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolHostError);
    return { code: (error as ToolHostError).code, message: (error as Error).message };
  }
};

describe('a manifest whose bindings are wrong is not a tool package, said clearly', () => {
  it.each([
    [
      'a host the package does not ask the network for',
      (permissions: Record<string, unknown>) => {
        permissions['secrets'] = { API_TOKEN: ['api.elsewhere.test'] };
      },
      'secret API_TOKEN is bound to "api.elsewhere.test", a host the package does not ask the network for (add it to "net")',
    ],
    [
      'a name that is not a variable name',
      (permissions: Record<string, unknown>) => {
        permissions['secrets'] = { 'API-TOKEN': [`api.secret.test:${PORTS.https}`] };
      },
      '"API-TOKEN" is not a secret name',
    ],
    [
      'a wildcard host',
      (permissions: Record<string, unknown>) => {
        permissions['net'] = ['*.secret.test'];
        permissions['secrets'] = { API_TOKEN: ['*.secret.test'] };
      },
      'is a wildcard: a secret is bound to exact hosts',
    ],
    [
      'no hosts',
      (permissions: Record<string, unknown>) => {
        permissions['secrets'] = { API_TOKEN: [] };
      },
      'secret API_TOKEN is not bound to a list of 1 to 32 hosts',
    ],
    [
      'not an object',
      (permissions: Record<string, unknown>) => {
        permissions['secrets'] = ['API_TOKEN'];
      },
      '"secrets" is not an object of secret names to lists of hosts',
    ],
  ])('%s', async (_case, edit, message) => {
    const host = makeHost({ secrets: { API_TOKEN: VALUE } });
    const error = await loadError(host, await secretTools(`bad-${hosts.length}`, edit));
    expect(error?.code).toBe('NOT_A_PACKAGE');
    expect(error?.message).toContain(message);
    expect(error?.message).not.toContain('\n');
    // Nothing else broke: the same host loads a good package.
    const good = await host.load(await secretTools(`good-${hosts.length}`));
    expect(good.modules.length).toBe(4);
  });
});

describe('the `secrets` option', () => {
  it.each([
    [{ API_TOKEN: '' }, 'Expected `secrets` of API_TOKEN to be a non-empty string, got an empty string'],
    [{ 'not a name': 'x' }, 'Expected `secrets` to name secrets as environment variables'],
    [{ API_TOKEN: 'line\r\nbreak' }, 'printable ASCII characters (no line breaks'],
    // Node can't write it into a header (the proxy's thread would throw), nor redact it as bytes.
    [{ API_TOKEN: 'tok\u00e9n' }, 'printable ASCII characters (no line breaks'],
    [{ API_TOKEN: 42 }, 'Expected `secrets` of API_TOKEN to be a non-empty string, got 42'],
    ['token', 'Expected `secrets` to be an object of secret names to values'],
  ])('refuses %j', (secrets, message) => {
    expect(() => new ToolHost({ secrets: secrets as never })).toThrow(message);
  });
});

describe('the thread tiers', () => {
  it.each(['worker', 'strict'] as const)(
    '%s leaves out a package that binds a granted secret, naming the process tier',
    async (isolation) => {
      const host = makeHost({ isolation, secrets: { API_TOKEN: VALUE } });
      const report = await host.load(await secretTools(`thread-${isolation}`));
      expect(report.modules.map((module) => module.code)).toEqual(Array(4).fill('SECRETS_REFUSED'));
      expect(report.modules[0]?.reason).toBe(
        "package secret-tools binds secrets (API_TOKEN), which only the process isolation tier keeps from its tools: load it with isolation 'process' (--isolation process), or set `exposeSecretValuesToThreadTiers` to hand its tools the values themselves",
      );
    },
  );

  it('offers it when no secret it binds is granted: the secret is simply absent', async () => {
    const host = makeHost({ isolation: 'worker' });
    const report = await host.load(await secretTools('ungranted'));
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    expect(outcomeText((await host.call('secret_leak', { name: 'API_TOKEN' })) as ToolOutcome)).toBe(
      'seen: null',
    );
  });

  it('with exposeSecretValuesToThreadTiers hands the tool the value, and redacts it from all that leaves the host', async () => {
    const logger = recordingLogger();
    const host = makeHost({
      isolation: 'worker',
      secrets: { API_TOKEN: VALUE },
      exposeSecretValuesToThreadTiers: true,
      logger,
    });
    const output: unknown[] = [];
    host.on('output', (event) => output.push(event));
    const report = await host.load(await secretTools('exposed'));
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    const outcome = (await host.call(
      'secret_leak',
      { name: 'API_TOKEN' },
      { onOutput: (event) => output.push(event) },
    )) as ToolOutcome;
    expect(outcomeText(outcome)).toBe('seen: [secret API_TOKEN]');
    expect(outcome.details).toEqual({
      value: '[secret API_TOKEN]',
      nested: [{ again: '[secret API_TOKEN]' }],
    });
    expect(JSON.stringify(output)).toContain('the secret is [secret API_TOKEN]');
    for (const seen of [outcome, output, logger.lines]) expect(JSON.stringify(seen)).not.toContain(VALUE);
  });

  it('redacts the full output written under dataDir too', async () => {
    const dataDir = join(root, 'redacted-data');
    const host = makeHost({
      isolation: 'worker',
      secrets: { API_TOKEN: VALUE },
      exposeSecretValuesToThreadTiers: true,
      outputBudgetBytes: 1024,
      dataDir,
    });
    await host.load(await secretTools('exposed-big'));
    const outcome = (await host.call('secret_leak', { name: 'API_TOKEN', repeat: 500 })) as ToolOutcome;
    expect(JSON.stringify(outcome)).not.toContain(VALUE);
    const files = await readdir(dataDir, { recursive: true });
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const path = join(dataDir, String(file));
      if (!(await stat(path)).isFile()) continue;
      const text = await readFile(path, 'utf8');
      expect(text).not.toContain(VALUE);
      expect(text).toContain('seen: [secret API_TOKEN]');
    }
  });
});

describe('in the process tier', () => {
  it('a granted secret bound to a host `allowNetwork` does not grant leaves the package out, with the reason', async () => {
    const host = makeHost({
      isolation: 'process',
      secrets: { API_TOKEN: VALUE },
      allowNetwork: { 'secret-tools': [`other.test:${PORTS.https}`] },
    });
    const report = await host.load(await secretTools('narrow-grant'));
    expect(report.modules[0]?.code).toBe('SECRETS_REFUSED');
    expect(report.modules[0]?.reason).toBe(
      `secret API_TOKEN is bound to api.secret.test:${PORTS.https}, which \`allowNetwork\` does not grant package secret-tools; grant it (--allow-network secret-tools), or don't grant the secret`,
    );
  });
});

describe('the lock', () => {
  it('records each binding by name and hosts, never the value, and names a changed one', async () => {
    const lockFile = join(root, 'secrets.lock.json');
    const options = {
      isolation: 'worker',
      secrets: { API_TOKEN: VALUE },
      exposeSecretValuesToThreadTiers: true,
    } as const;
    const pinning = makeHost(options);
    const folder = await secretTools('locked');
    await pinning.load(folder);
    await pinning.pin({ lockFile });
    const text = await readFile(lockFile, 'utf8');
    expect(text).not.toContain(VALUE);
    const entry = JSON.parse(text).tools[0];
    expect(entry.secrets).toEqual({
      API_TOKEN: [
        `api.secret.test:${PORTS.https}`,
        `api.secret.test:${PORTS.http}`,
        `http://plain.secret.test:${PORTS.http}`,
      ],
      OTHER_TOKEN: [`other.test:${PORTS.https}`],
    });
    // The binding widened: left out, the change named.
    const manifestFile = join(folder, 'package.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
    manifest.toolhost.permissions.secrets.OTHER_TOKEN.push(`api.secret.test:${PORTS.https}`);
    await writeFile(manifestFile, JSON.stringify(manifest));
    const checking = makeHost({ ...options, lockFile });
    const report = await checking.load(folder);
    expect(report.modules[0]?.code).toBe('CODE_CHANGED');
    expect(report.modules[0]?.reason).toContain("the package's secret bindings changed since it was pinned");
    expect(report.modules[0]?.reason).toContain('(secrets.OTHER_TOKEN)');
  });
});

describe('toolhost --secret', () => {
  it('takes the value of the variable it names, which reaches the host (here: refused in the worker tier) and never the output', async () => {
    const folder = await secretTools('cli');
    const result = await runCli(['list', '--isolation', 'worker', '--secret', 'API_TOKEN=MY_TOKEN', folder], {
      tmpDir: root,
      env: { MY_TOKEN: VALUE },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('SECRETS_REFUSED: package secret-tools binds secrets (API_TOKEN)');
    expect(result.stdout + result.stderr).not.toContain(VALUE);
  });

  it('is a usage error, one line naming the flag, when the variable is unset or empty', async () => {
    const folder = await secretTools('cli-missing');
    for (const env of [{}, { API_TOKEN: '' }]) {
      const result = await runCli(['list', '--secret', 'API_TOKEN', folder], { tmpDir: root, env });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([
        `toolhost: expected --secret to be NAME or NAME=VAR, got "API_TOKEN": the environment variable API_TOKEN is ${'API_TOKEN' in env ? 'empty' : 'not set'}; set it, or name another with --secret API_TOKEN=VAR`,
      ]);
    }
  });
});
