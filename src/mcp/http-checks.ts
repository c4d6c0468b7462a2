/**
 * The checks every HTTP request passes before anything of it is parsed, as the spec's security
 * guidance asks, and the CORS answers for the origins the operator allowed:
 *
 * - an `Origin` must be one the operator allowed, or (on a loopback-bound server) the server's own
 *   loopback origin, `http://127.0.0.1:PORT` with its own port: a page on another site, or a
 *   DNS-rebinding page (`http://evil.example:PORT`), is refused with 403;
 * - on a loopback-bound server the `Host` must be a loopback name (a rebinding page's request
 *   carries its own host name);
 * - with a token, `Authorization: Bearer <token>` (401). A CORS preflight carries no credentials
 *   (browsers never send them on one), so it is answered before the token is asked for; the
 *   request it announces is not.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The one path the HTTP server answers on. */
export const MCP_PATH = '/mcp';

/** What the checks need to know of the server. */
export interface CheckSettings {
  /** Whether the server listens on a loopback address. */
  loopback: boolean;
  /** The port it listens on (its own loopback origin names it). */
  port: number;
  /** The token's digest, when one is required. */
  token: Buffer | undefined;
  /** The origins `--allow-origin` named. */
  allowedOrigins: readonly string[];
}

/** An answer given instead of serving the request. */
export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** Headers a browser page may read on a reply (besides the CORS-safelisted ones). */
const EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';
/** Headers a page may send: the spec's own, `Authorization` and `Content-Type`. */
const ALLOWED_HEADERS =
  'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID';
/** A header name (RFC 9110 token); a preflight's `Mcp-Param-*` names are echoed only if they are. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** Why `request` is not served, or `undefined` when it passed every check. */
export function refuse(request: IncomingMessage, settings: CheckSettings): Refusal | undefined {
  const path = (request.url ?? '').split('?')[0];
  if (path !== MCP_PATH) return { status: 404, message: `Not found: the MCP endpoint is ${MCP_PATH}` };
  const origin = request.headers.origin;
  if (origin !== undefined && !originAllowed(origin, settings)) {
    return { status: 403, message: `Forbidden: origin ${origin} is not allowed` };
  }
  if (settings.loopback && !isLoopbackName(hostName(request.headers.host))) {
    return {
      status: 403,
      message: 'Forbidden: this server listens on loopback and takes loopback host names only',
    };
  }
  if (settings.token !== undefined && !isPreflight(request)) {
    const match = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
    if (match?.[1] === undefined || !timingSafeEqual(digest(match[1]), settings.token)) {
      return { status: 401, message: 'Unauthorized', headers: { 'WWW-Authenticate': 'Bearer' } };
    }
  }
  return undefined;
}

/** An `OPTIONS` request from a browser asking whether it may send the request it names. */
export function isPreflight(request: IncomingMessage): boolean {
  return (
    request.method === 'OPTIONS' &&
    request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined
  );
}

/**
 * The CORS headers for a reply to `request`: none unless its origin is one `--allow-origin` named
 * (the server's own loopback origin is same-origin and needs none).
 */
export function corsHeaders(request: IncomingMessage, settings: CheckSettings): Record<string, string> {
  const origin = request.headers.origin;
  if (origin === undefined || !settings.allowedOrigins.includes(origin)) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    Vary: 'Origin',
  };
}

/** The headers of the answer to a preflight `request` (already found allowed). */
export function preflightHeaders(request: IncomingMessage, settings: CheckSettings): Record<string, string> {
  const asked = String(request.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => /^mcp-param-/i.test(name) && HEADER_NAME.test(name));
  return {
    ...corsHeaders(request, settings),
    'Access-Control-Allow-Methods': 'POST, OPTIONS',
    'Access-Control-Allow-Headers': [ALLOWED_HEADERS, ...asked].join(', '),
    'Access-Control-Max-Age': '600',
  };
}

function originAllowed(origin: string, settings: CheckSettings): boolean {
  if (settings.allowedOrigins.includes(origin)) return true;
  if (!settings.loopback) return false;
  // The server's own origin, as a page it served (or a browser pointed at it) sends: a loopback
  // name with this server's port. A rebinding page has its own host name here, so it stays refused.
  try {
    const url = new URL(origin);
    return (
      url.protocol === 'http:' &&
      url.origin === origin &&
      isLoopbackName(url.hostname) &&
      url.port === String(settings.port)
    );
  } catch {
    return false;
  }
}

/** Hashing first gives equal lengths, which timingSafeEqual needs. */
export function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function hostName(header: string | undefined): string {
  if (header === undefined) return '';
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return '';
  }
}

/** Whether an address to listen on is a loopback one. */
export function isLoopback(host: string): boolean {
  return host === '::1' || isLoopbackName(host);
}

/** A host name as a URL gives it (IPv6 in brackets). */
function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}
