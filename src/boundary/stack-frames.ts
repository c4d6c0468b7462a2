/**
 * Where an error happened, for a tool's author: the frames of a stack that are the tool's own (its
 * package's files and dependencies), without Node's internals and without toolhost's or piscina's
 * code. Used inside workers (on a tool's error, whose `stack` may be anything) and on the host.
 */

/** At most this many frames are kept; a stack overflow's thousands of repeats say nothing more. */
export const MAX_FRAMES = 12;

/** A frame's location: a file URL or an absolute path, with a line and a column. */
const LOCATION = /(?:\(|^at (?:async )?)((?:file:\/\/)?\/[^\s()]*?:\d+:\d+)\)?$/;

/** The frames of `stack` that are not under any of `skip` (folders as paths or file URLs), as lines. */
export function toolFrames(stack: unknown, skip: readonly string[]): string[] {
  if (typeof stack !== 'string') return [];
  const frames: string[] = [];
  for (const line of stack.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('at ')) continue;
    const location = LOCATION.exec(trimmed)?.[1];
    if (location === undefined || skip.some((folder) => location.startsWith(folder))) continue;
    frames.push(`    ${trimmed.slice(0, 500)}`);
    if (frames.length >= MAX_FRAMES) break;
  }
  return frames;
}

/** The location (`file:line:column`) of the first of {@link toolFrames}. */
export function firstLocation(stack: unknown, skip: readonly string[]): string | undefined {
  const [frame] = toolFrames(stack, skip);
  return frame === undefined ? undefined : LOCATION.exec(frame.trim())?.[1];
}

/** An error's `stack`, read without trusting it (a getter may throw; anything but a string is none). */
export function stackOf(error: unknown): string | undefined {
  try {
    const stack = (error as { stack?: unknown } | null)?.stack;
    return typeof stack === 'string' ? stack : undefined;
  } catch {
    return undefined;
  }
}

/** Paths in `text` under `root` (as paths or file URLs) written relative to it, as an author reads them. */
export function relativeTo(text: string, root: string): string {
  const folder = root.endsWith('/') ? root : `${root}/`;
  return text.replaceAll(`file://${folder}`, '').replaceAll(folder, '');
}
