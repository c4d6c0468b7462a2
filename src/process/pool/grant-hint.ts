/**
 * A refused connection's answer, with what would grant it. A package process whose sandbox gives it
 * no network answers a failed connection with where the connection went, not the package, which it
 * doesn't know; the host's pool adds what grants that host to this package.
 */
import type { PoolReply } from '../../calls/answer-once.js';

/** The sentence a package process answers a failed connection with when it has no network. */
const NO_NETWORK_REFUSAL =
  /^the process isolation tier refused network access to ([\w.:[\]-]+) \(no network is granted to this package\)$/;

/**
 * `reply`, its no-network refusal (if it is one) ending with `hint`, `<host>` in it replaced by
 * where the connection went; any other reply as it is.
 */
export function withGrantHint(reply: PoolReply, hint: string | undefined): PoolReply {
  if (hint === undefined || reply.ok || reply.error.code !== 'TOOL_ACCESS_DENIED') return reply;
  const where = NO_NETWORK_REFUSAL.exec(reply.error.message)?.[1];
  if (where === undefined) return reply;
  const message = `${reply.error.message.slice(0, -')'.length)}: ${hint.replaceAll('<host>', where)})`;
  return { ...reply, error: { ...reply.error, message } };
}
