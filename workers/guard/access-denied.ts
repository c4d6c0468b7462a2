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
