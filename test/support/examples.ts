/**
 * The examples (`examples/`) laid out as a user would have them after `npm install`: a copy of the
 * example's folder in a temp folder, with a node_modules of its own. Its registry dependencies are
 * taken from this repository's node_modules (they are pinned devDependencies of the root package,
 * so `npm ci` installs them), with everything they depend on; `toolhost` itself is a link to this
 * checkout, as `npm install /path/to/toolhost` makes it.
 */
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { REPO } from './cli-run.js';

export const EXAMPLES = join(REPO, 'examples');

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  toolhost?: { permissions?: { net?: unknown } };
  [key: string]: unknown;
}

async function readManifest(folder: string): Promise<Manifest> {
  return JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as Manifest;
}

/**
 * Installs `names` and everything they depend on from the repository's node_modules into
 * `folder/node_modules`, flat as npm hoists them (a dependency's own nested node_modules comes
 * along with it). `toolhost` is linked to this checkout instead.
 */
export async function installDependencies(folder: string, names: readonly string[]): Promise<void> {
  const installed = new Set<string>();
  const pending = [...names];
  await mkdir(join(folder, 'node_modules'), { recursive: true });
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (installed.has(name)) continue;
    installed.add(name);
    const target = join(folder, 'node_modules', name);
    if (name === 'toolhost') {
      await symlink(REPO, target, 'dir');
      continue;
    }
    const source = join(REPO, 'node_modules', name);
    // Copied, not hard-linked: a link changes the shared file's ctime and link count, which a
    // selftest run in another test file (watching its package's files) would see as a write.
    await cp(source, target, { recursive: true, verbatimSymlinks: true });
    const manifest = await readManifest(source);
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      // A version npm nested under the package was copied with it; the rest is hoisted.
      const nested = join(source, 'node_modules', dependency);
      if (!(await exists(nested))) pending.push(dependency);
    }
  }
}

async function exists(path: string): Promise<boolean> {
  return readFile(join(path, 'package.json')).then(
    () => true,
    () => false,
  );
}

/**
 * Lays example `name` out in `into/<name>` with its dependencies (and devDependencies) installed,
 * and returns the folder.
 */
export async function layOutExample(name: string, into: string): Promise<string> {
  const folder = join(into, name);
  await cp(join(EXAMPLES, name), folder, {
    recursive: true,
    filter: (source) => !source.includes(`${name}/node_modules`),
  });
  const manifest = await readManifest(folder);
  // The example pins exact versions; the root's devDependencies must install those, or the suite
  // would test the example against versions it doesn't declare.
  for (const [dependency, wanted] of Object.entries(manifest.dependencies ?? {})) {
    if (!/^\d+\.\d+\.\d+$/.test(wanted)) continue;
    const installed = (await readManifest(join(REPO, 'node_modules', dependency)))['version'];
    if (installed !== wanted)
      throw new Error(
        `examples/${name} pins ${dependency}@${wanted} but the repository installs ${String(installed)}: pin the same version in both package.json files`,
      );
  }
  await installDependencies(folder, [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.devDependencies ?? {}),
  ]);
  return folder;
}

/** Replaces the network a laid-out package's manifest asks for (`toolhost.permissions.net`). */
export async function askForNetwork(folder: string, hosts: readonly string[]): Promise<void> {
  const manifest = await readManifest(folder);
  const toolhost = manifest.toolhost ?? {};
  manifest.toolhost = { ...toolhost, permissions: { ...toolhost.permissions, net: [...hosts] } };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest, null, 2));
}

/**
 * A weather service on 127.0.0.1 that serves weather-tools' sample station page as
 * `/stations/oslo.html`, a forged one (`forged.html`) and a 2 MiB one (`huge.html`), 404 for every
 * other path, and records each path asked for.
 */
export interface StationServer {
  readonly baseUrl: string;
  /** `127.0.0.1:<port>`, as a manifest names it. */
  readonly hostAndPort: string;
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startStationServer(): Promise<StationServer> {
  const page = await readFile(join(EXAMPLES, 'weather-tools/sample/station.html'));
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/stations/oslo.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page);
    } else if (request.url === '/stations/forged.html') {
      // A page in the station's shape whose temperature is not a number.
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page.toString('utf8').replace('>-3.5<', '>hot<'));
    } else if (request.url === '/stations/huge.html') {
      // 2 MiB sent without a content-length, so only the body's size can tell.
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<p>'.padEnd(2 * 1024 * 1024, 'x'));
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('no such station');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    hostAndPort: `127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
