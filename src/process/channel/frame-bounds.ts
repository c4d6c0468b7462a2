/**
 * What a package's process may send in one frame, as both ends count it: the host's reader ends a
 * process whose frame is over these bounds (child-notes.ts), and the process itself answers a
 * reply over them as its call's TOOL_BAD_RESULT instead of sending it (child-reply.ts). Kept apart
 * from the protocol's parsers, so the process loads only this.
 */
import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import { MAX_PROGRESS_BYTES } from '../../boundary/protocol.js';

/**
 * The most JSON bytes `maxLogChars` characters of output take: a character each entry at the most
 * (writes that alternate stdout and stderr), each entry `{"stream":"stdout","text":"…"},` around
 * a character of up to six bytes (a control character's escape).
 */
function maxOutputBytes(limits: ReplyLimits): number {
  return 38 * limits.maxLogChars;
}

/**
 * The largest frame a process may send: a reply of `maxResultBytes` with `maxLogChars` of output,
 * as JSON (where a control character takes six bytes), and some room for the rest.
 */
export function maxChildFrameBytes(limits: ReplyLimits): number {
  return 6 * limits.maxResultBytes + maxOutputBytes(limits) + 1024 * 1024;
}

/**
 * The largest frame of any other message (progress, output, a fault): `maxLogChars` of output or a
 * progress message's data, as JSON, and some room. An honest process never sends more; one that
 * does is ended after that one frame, so the reply's cap is spent on a reply at most once.
 */
export function maxChildNoteBytes(limits: ReplyLimits): number {
  return Math.max(maxOutputBytes(limits), 6 * MAX_PROGRESS_BYTES) + 64 * 1024;
}

/**
 * The most values a frame's JSON may hold: 1,048,576, and three for each character of output a
 * reply may carry (an entry a character, each an object of two strings). An honest reply's are its
 * content blocks, its output's entries and a tool's own `details` or structured result; JSON.parse
 * takes about 175 ms and 100 MB for a million empty objects (Node 20, this project's 2-core
 * machine), and a frame is parsed before it is checked.
 */
export function maxChildFrameValues(limits: ReplyLimits): number {
  return 1_048_576 + 3 * limits.maxLogChars;
}
