/**
 * What an egress proxy answers a tool when it does not relay: a refusal (`403`, with the sentence
 * the tool error shows, in the body and in a header) or a failure to reach the host (`502`), never
 * a bare reset. Every decision is reported as it is made.
 */
import { type Decision, decide, refusalMessage, subjectOf } from './policy.js';
import type { ProxyOptions } from './proxy-options.js';
import { hostPort } from './rules.js';

/** The header a refusal's sentence travels in too, for clients that read headers, not bodies. */
export const REFUSAL_HEADER = 'x-toolhost-refusal';
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The grant's decision on a request, reported. */
export async function decided(options: ProxyOptions, host: string, port: number): Promise<Decision> {
  const decision = await decide(options.policy, host, port);
  options.onNote(
    decision.allowed
      ? { host: decision.host, port, allowed: true, address: decision.address }
      : { host: decision.host, port, allowed: false, reason: decision.reason },
  );
  return decision;
}

/** The refusal of a connection asked for while none of the package's calls is in flight. */
export function idleRefusal(options: ProxyOptions, host: string, port: number): string {
  const reason = `no call of ${subjectOf(options.policy)} is running`;
  options.onNote({ host, port, allowed: false, reason });
  return refusalMessage({ host, port, reason });
}

export function unreachable(
  decision: { host: string; port: number; address: string },
  error: NodeJS.ErrnoException,
): string {
  return `the process isolation tier could not reach ${hostPort(decision.host, decision.port)} at ${decision.address} (${error.code ?? 'connection failed'})`;
}

/** A whole HTTP/1.1 response carrying `message`, for a connection that is closed after it. */
export function response(status: number, message: string): string {
  const body = Buffer.from(message, 'utf8');
  const reason = STATUS_TEXT[status] ?? 'Bad Request';
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\n${REFUSAL_HEADER}: ${encodeURIComponent(message)}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${message}`;
}
