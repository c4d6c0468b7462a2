/**
 * A refusal of Node's permission model (the strict tier's, or the process tier's where it has no
 * sandbox), as the error result that names the tier and what was refused.
 * Node's own message ("Access to this API has been restricted") doesn't say.
 */

/** At most this many `cause`s deep: `fetch` wraps the refused `connect` in a `TypeError`. */
const MAX_CAUSES = 3;

/**
 * The `TOOL_ACCESS_DENIED` result for a thrown permission refusal, or `undefined` for anything else.
 * File, process and worker refusals carry `permission` and `resource`; a refused network operation
 * (Node 25 and later) carries only the syscall and its address or host name.
 */
export function accessDenied(
  thrown: unknown,
  tier: 'strict' | 'process' = 'strict',
): { code: 'TOOL_ACCESS_DENIED'; message: string } | undefined {
  try {
    let error = thrown;
    for (let depth = 0; depth <= MAX_CAUSES && typeof error === 'object' && error !== null; depth++) {
      const egress = egressRefusal(error as Record<string, unknown>);
      if (egress !== undefined) return { code: 'TOOL_ACCESS_DENIED', message: egress };
      const refused = refusal(error as Record<string, unknown>);
      if (refused !== undefined) {
        return { code: 'TOOL_ACCESS_DENIED', message: `the ${tier} isolation tier refused ${refused}` };
      }
      error = (error as { cause?: unknown }).cause;
    }
  } catch {
    // A tool's error whose properties throw when read is an ordinary throw.
  }
  return undefined;
}

/**
 * The process tier's egress proxy refused a connection: its agent threw the proxy's own sentence
 * (`the process isolation tier refused network access to evil.example:443 (not granted to package
 * weather-tools)`). A tool can throw the same shape; it only changes its own result's text.
 */
function egressRefusal(error: Record<string, unknown>): string | undefined {
  if (error['code'] !== 'ERR_TOOLHOST_NETWORK_REFUSED') return undefined;
  const message = error['message'];
  return typeof message === 'string' && message.startsWith('the process isolation tier ')
    ? message
    : undefined;
}

function refusal(error: Record<string, unknown>): string | undefined {
  if (error['code'] !== 'ERR_ACCESS_DENIED') return undefined;
  const { permission, resource, syscall, address, port, hostname } = error;
  if (typeof permission === 'string') {
    return typeof resource === 'string' && resource !== '' ? `${permission} on ${resource}` : permission;
  }
  if (typeof syscall !== 'string') return undefined;
  const where =
    typeof address === 'string'
      ? typeof port === 'number' || typeof port === 'string'
        ? `${address}:${port}`
        : address
      : typeof hostname === 'string'
        ? hostname
        : undefined;
  return where === undefined ? `Net (${syscall})` : `Net (${syscall} ${where})`;
}

/** The errors a connection gets in a sandbox without a network: no route, no name service, no one there. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * The `TOOL_ACCESS_DENIED` result for a connection that failed in a process the tier gave no
 * network (`fetch failed`, `connect ECONNREFUSED 127.0.0.1:18777`, `getaddrinfo EAI_AGAIN
 * example.com`), naming where it went; `undefined` for anything else. The host adds which grant
 * would allow it: this process does not know its package.
 */
export function networkRefused(thrown: unknown): { code: 'TOOL_ACCESS_DENIED'; message: string } | undefined {
  try {
    let error = thrown;
    for (let depth = 0; depth <= MAX_CAUSES && typeof error === 'object' && error !== null; depth++) {
      const where = unreachable(error as Record<string, unknown>);
      if (where !== undefined) {
        return {
          code: 'TOOL_ACCESS_DENIED',
          message: `the process isolation tier refused network access to ${where} (no network is granted to this package)`,
        };
      }
      error = (error as { cause?: unknown }).cause;
    }
  } catch {
    // A tool's error whose properties throw when read is an ordinary throw.
  }
  return undefined;
}

function unreachable(error: Record<string, unknown>): string | undefined {
  const { code, address, port, hostname } = error;
  if (typeof code !== 'string' || !UNREACHABLE.has(code)) return undefined;
  const where =
    typeof address === 'string'
      ? typeof port === 'number' || typeof port === 'string'
        ? `${address.includes(':') ? `[${address}]` : address}:${port}`
        : address
      : typeof hostname === 'string'
        ? hostname
        : undefined;
  // Only a plain host (and port) goes into the sentence: the error is the tool's to shape.
  return where !== undefined && /^[\w.:[\]-]{1,300}$/.test(where) ? where : undefined;
}
