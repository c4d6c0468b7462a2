/**
 * A call's reply as the frame a package's process sends. The host's reader ends a process whose
 * frame is over its bounds (frame-bounds.ts), as a protocol breaker. An honest reply can be over
 * the value bound: a tool's own `details` or structured result of more than a million values fits
 * `maxResultBytes`. Such a reply is the call's `TOOL_BAD_RESULT` here, said plainly, and the
 * process goes on; the thread tiers take it.
 */

import type { ChildMessage } from '../../boundary/child-protocol.js';
import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import { maxChildFrameBytes, maxChildFrameValues } from '../channel/frame-bounds.js';
import { holdsMoreValues } from '../channel/frame-reader.js';
import { encodeFrame, HEADER_BYTES } from '../channel/frames.js';

type ReplyMessage = Extract<ChildMessage, { type: 'reply' }>;

/** The frame for `message`, or for its call's `TOOL_BAD_RESULT` when the host would refuse it. */
export function replyFrame(message: ReplyMessage, limits: ReplyLimits): Buffer {
  const frame = encodeFrame(message);
  const bytes = frame.length - HEADER_BYTES;
  const maxBytes = maxChildFrameBytes(limits);
  const maxValues = maxChildFrameValues(limits);
  let refusal: string | undefined;
  if (bytes > maxBytes) {
    refusal = `the reply is ${bytes} bytes as JSON, over the ${maxBytes} bytes a package's process may send`;
  } else if (holdsMoreValues(frame, HEADER_BYTES, frame.length, maxValues)) {
    refusal = `the reply (the result and the output) holds more than ${maxValues} JSON values, more than a package's process may send`;
  }
  if (refusal === undefined) return frame;
  const { reply } = message;
  return encodeFrame({
    type: 'reply',
    taskId: message.taskId,
    reply: {
      ok: false,
      error: { code: 'TOOL_BAD_RESULT', message: refusal },
      logs: reply.logs,
      droppedLogChars: reply.droppedLogChars,
      progressSent: 0,
      logNotesSent: 0,
    },
  } satisfies ReplyMessage);
}
