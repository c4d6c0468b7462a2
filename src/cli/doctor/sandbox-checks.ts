/**
 * The process tier's OS sandbox: bubblewrap present and able to make a sandbox (the probe the tier
 * itself uses), and what keeps it from one where it can't: AppArmor's restriction on unprivileged
 * user namespaces (Ubuntu 24.04 and later), user namespaces turned off (`user.max_user_namespaces`,
 * Debian's `kernel.unprivileged_userns_clone`), or a container that refuses them.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { sandboxSupport } from '../../process/sandbox/sandbox.js';
import { type DoctorCheck, withFix } from './check.js';

const APPARMOR_RESTRICTION = '/proc/sys/kernel/apparmor_restrict_unprivileged_userns';
const MAX_USER_NAMESPACES = '/proc/sys/user/max_user_namespaces';
const USERNS_CLONE = '/proc/sys/kernel/unprivileged_userns_clone';

/** A one-line /proc/sys setting, or undefined where this kernel has none. */
function sysctl(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The container runtime this process runs in, when it can tell. */
export function containerRuntime(): string | undefined {
  if (existsSync('/.dockerenv')) return 'Docker';
  if (existsSync('/run/.containerenv')) return 'Podman';
  const cgroup = sysctl('/proc/1/cgroup') ?? '';
  if (/kubepods/.test(cgroup)) return 'Kubernetes';
  if (/docker|containerd|lxc/.test(cgroup)) return 'a container';
  return undefined;
}

function bwrapVersion(bwrap: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bwrap, ['--version'], { timeout: 5_000 }, (error, stdout) =>
      resolve(error === null ? stdout.trim() : undefined),
    );
  });
}

const INSTALL_BWRAP =
  'install bubblewrap, on the PATH toolhost runs with: sudo apt-get install bubblewrap (Debian, Ubuntu), sudo dnf install bubblewrap (Fedora), sudo pacman -S bubblewrap (Arch), sudo apk add bubblewrap (Alpine)';

/**
 * The AppArmor profile that lets bubblewrap alone make user namespaces (docs/troubleshooting.md has
 * it as a file), and the blunt alternative with its trade-off.
 */
function apparmorFix(bwrap: string): string {
  return [
    'let bubblewrap alone make user namespaces, with an AppArmor profile (the restriction stays on for every other program, but anyone who can run bwrap gets one through it):',
    `  printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap ${bwrap} flags=(unconfined) {\\n  userns,\\n  include if exists <local/bwrap>\\n}\\n' | sudo tee /etc/apparmor.d/bwrap`,
    '  sudo apparmor_parser -r /etc/apparmor.d/bwrap',
    'or turn the restriction off for every program (blunt: every local program reaches the kernel code Ubuntu closed off again):',
    "  sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; echo 'kernel.apparmor_restrict_unprivileged_userns=0' | sudo tee /etc/sysctl.d/60-userns.conf",
    'see docs/troubleshooting.md, "bubblewrap is refused by AppArmor"',
  ].join('\n');
}

export async function sandboxChecks(): Promise<DoctorCheck[]> {
  if (process.platform !== 'linux') {
    return [
      {
        id: 'bubblewrap',
        status: 'not-applicable',
        found: `there is no bubblewrap sandbox on ${process.platform}: the process tier runs under Node's permission model`,
        tiers: ['process'],
      },
    ];
  }
  const support = await sandboxSupport();
  const restriction = sysctl(APPARMOR_RESTRICTION);
  const maxNamespaces = sysctl(MAX_USER_NAMESPACES);
  const cloneAllowed = sysctl(USERNS_CLONE);
  const container = containerRuntime();
  const bwrapPath = support.available ? realpathSync(support.bwrap) : '/usr/bin/bwrap';

  // bubblewrap there, but refused: what refused it.
  const refused = !support.available && !support.reason.includes('not installed');
  const apparmorBlocks = restriction === '1' && refused;
  const namespacesOff = maxNamespaces === '0' || cloneAllowed === '0';
  const containerBlocks = refused && container !== undefined && !apparmorBlocks && !namespacesOff;

  let bubblewrap: DoctorCheck;
  if (support.available) {
    const version = await bwrapVersion(support.bwrap);
    bubblewrap = {
      id: 'bubblewrap',
      status: 'ok',
      found: `${support.bwrap}${version === undefined ? '' : ` (${version})`} made a trial sandbox${support.disableUserns ? '' : ' (without --disable-userns: bubblewrap before 0.8 lets a tool make user namespaces inside)'}`,
      tiers: ['process'],
    };
  } else if (support.reason.includes('not installed')) {
    bubblewrap = withFix(
      { id: 'bubblewrap', status: 'missing', found: support.reason, tiers: ['process'] },
      INSTALL_BWRAP,
    );
  } else {
    const cause = apparmorBlocks
      ? 'the AppArmor check below'
      : namespacesOff
        ? 'the user namespace check below'
        : containerBlocks
          ? 'the container check below'
          : `the kernel's refusal: run ${bwrapPath} --unshare-user --ro-bind / / true to see it`;
    bubblewrap = withFix(
      { id: 'bubblewrap', status: 'missing', found: support.reason, tiers: ['process'] },
      `see ${cause}`,
    );
  }

  const apparmor: DoctorCheck =
    restriction === undefined
      ? {
          id: 'apparmor-userns',
          status: 'not-applicable',
          found: `AppArmor does not restrict unprivileged user namespaces here (${APPARMOR_RESTRICTION} is absent)`,
          tiers: ['process'],
        }
      : restriction !== '1'
        ? {
            id: 'apparmor-userns',
            status: 'ok',
            found:
              'AppArmor does not restrict unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=0)',
            tiers: ['process'],
          }
        : support.available
          ? {
              id: 'apparmor-userns',
              status: 'ok',
              found:
                'AppArmor restricts unprivileged user namespaces, and a profile allows them to bubblewrap',
              tiers: ['process'],
            }
          : withFix(
              {
                id: 'apparmor-userns',
                status: 'missing',
                found:
                  'AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 24.04 and later), so bubblewrap cannot make its sandbox',
                tiers: ['process'],
              },
              apparmorFix(bwrapPath),
            );

  return [bubblewrap, apparmor, namespaceCheck({ maxNamespaces, cloneAllowed, container, containerBlocks })];
}

function namespaceCheck(found: {
  maxNamespaces: string | undefined;
  cloneAllowed: string | undefined;
  container: string | undefined;
  containerBlocks: boolean;
}): DoctorCheck {
  const where =
    found.container === undefined ? '' : ` (in ${found.container}: run it on the container's host)`;
  if (found.maxNamespaces === '0') {
    return withFix(
      {
        id: 'user-namespaces',
        status: 'missing',
        found: 'user namespaces are turned off (user.max_user_namespaces=0)',
        tiers: ['process'],
      },
      `sudo sysctl -w user.max_user_namespaces=15000${where}, and the same line without sudo sysctl -w in /etc/sysctl.d/60-userns.conf to keep it`,
    );
  }
  if (found.cloneAllowed === '0') {
    return withFix(
      {
        id: 'user-namespaces',
        status: 'missing',
        found: 'unprivileged user namespaces are turned off (kernel.unprivileged_userns_clone=0)',
        tiers: ['process'],
      },
      `sudo sysctl -w kernel.unprivileged_userns_clone=1${where}, and the same line without sudo sysctl -w in /etc/sysctl.d/60-userns.conf to keep it`,
    );
  }
  if (found.containerBlocks) {
    return withFix(
      {
        id: 'user-namespaces',
        status: 'missing',
        found: `this runs in ${found.container}, which refuses the user namespaces bubblewrap makes (its seccomp or AppArmor profile)`,
        tiers: ['process'],
      },
      "start the container with a seccomp profile that allows unshare and clone with CLONE_NEWUSER (Docker and Podman: --security-opt seccomp=unconfined --security-opt apparmor=unconfined, which also lifts the container's other syscall filters), or run toolhost outside the container",
    );
  }
  const limit = found.maxNamespaces === undefined ? '' : ` (user.max_user_namespaces=${found.maxNamespaces})`;
  return {
    id: 'user-namespaces',
    status: 'ok',
    found: `unprivileged user namespaces are allowed${limit}${found.container === undefined ? '' : `, in ${found.container}`}`,
    tiers: ['process'],
  };
}
