/**
 * `toolhost mcp-config <package>`: the network grant each tool package must be served with. A
 * package asks for the network in its manifest (`"toolhost": { "permissions": { "net": … } }`);
 * asking is not having: `serve` grants it only with `--allow-network <name>`, which the printed
 * configurations leave out, so that granting stays the operator's decision, made in view.
 */
import { stat } from 'node:fs/promises';
import { showHidden } from '../../declaration/visible-text.js';
import { resolveSource } from '../../sources/resolve-path.js';

/** A package of `mcp-config` that asks for the network, as `mcp-config --json` prints it. */
export interface NetworkAskingPackage {
  /** The package folder, absolute. */
  path: string;
  /** Its `name`; none where package.json gives none (no `--allow-network` can name it then). */
  name: string | null;
  /** What it asks for: all of the network (`true`) or these hosts. */
  net: true | string[];
  /** The arguments `serve` needs to grant it what it asks; empty for a package without a name. */
  allowNetwork: string[];
}

/** The packages among `paths` whose manifests ask for the network (servers configs and modules ask none). */
export async function networkAskingPackages(paths: readonly string[]): Promise<NetworkAskingPackage[]> {
  const found: NetworkAskingPackage[] = [];
  for (const path of paths) {
    if (!(await stat(path).catch(() => undefined))?.isDirectory()) continue;
    // A folder that is no tool package is said by `serve` itself, with its reason.
    const source = await resolveSource(path).catch(() => undefined);
    const net = source?.permissions.net;
    if (
      source === undefined ||
      net === undefined ||
      net === false ||
      (Array.isArray(net) && net.length === 0)
    )
      continue;
    const name = source.packageName ?? null;
    found.push({
      path,
      name,
      net: net === true ? true : [...net],
      allowNetwork: name === null ? [] : ['--allow-network', name],
    });
  }
  return found;
}

/**
 * What stderr says of each package that asks for the network: the grant it must be served with,
 * its words quoted by `shellLine` (a name is the manifest's, and may hold what a shell reads).
 */
export function packageGrantLines(
  packages: readonly NetworkAskingPackage[],
  shellLine: (words: readonly string[]) => string,
): string[] {
  return packages.map((found) => {
    const asks = found.net === true ? 'all of the network' : `the network: ${found.net.join(', ')}`;
    const line =
      found.name === null
        ? `toolhost: ${found.path} asks for ${asks}, but its package.json has no "name", which --allow-network grants by: give it one, then add --allow-network <name> to the serve command`
        : `toolhost: package ${found.name} asks for ${asks}; the configurations above don't grant it: add ${shellLine(found.allowNetwork)} to the serve command (or ${shellLine(['--allow-network', `${found.name}=HOST,...`])} for some of those hosts), or its tools get none`;
    // What a manifest says is shown, never obeyed by the terminal: control characters are made visible.
    return showHidden(line);
  });
}
