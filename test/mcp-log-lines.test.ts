/**
 * How one call's printed output becomes `notifications/message` params as it arrives in pieces: a
 * line written in parts is sent once whole (or when the call answers), stderr is `warning`, a
 * level above `info` leaves stdout out, more than 1000 lines end in one `warning` saying what was
 * not sent, and nothing is sent after the call's end.
 */
import { describe, expect, it } from 'vitest';
import type { ToolOutputEvent } from '../dist/src/index.js';
import { CallLog } from '../dist/src/mcp/logging.js';

type Params = Record<string, unknown>;

function callLog(level: 'debug' | 'info' | 'warning') {
  const sent: Params[] = [];
  const log = new CallLog({ level, send: async (notification) => sent.push(notification.params) }, 'printer');
  const take = (logs: ToolOutputEvent['logs'], droppedChars = 0) =>
    log.take({ name: 'printer', callId: 'c1', logs, droppedChars });
  return { sent, log, take };
}

describe('one call’s log messages', () => {
  it('sends a line written in pieces once it is whole, and what is left when the call answers', () => {
    const { sent, log, take } = callLog('info');
    take([{ stream: 'stdout', text: 'wait' }]);
    expect(sent).toEqual([]);
    take([
      { stream: 'stderr', text: 'oops\n' },
      { stream: 'stdout', text: 'ing\nhalf' },
    ]);
    expect(sent).toEqual([
      { level: 'warning', logger: 'printer', data: 'oops' },
      { level: 'info', logger: 'printer', data: 'waiting' },
    ]);
    log.end();
    expect(sent.at(-1)).toEqual({ level: 'info', logger: 'printer', data: 'half' });
    take([{ stream: 'stdout', text: 'after the answer\n' }]);
    log.end();
    expect(sent).toHaveLength(3);
  });

  it('leaves stdout out at warning, and escapes control characters', () => {
    const { sent, log, take } = callLog('warning');
    take([
      { stream: 'stdout', text: 'not wanted\n' },
      { stream: 'stderr', text: '\u001b[2Jcleared\r\n' },
    ]);
    log.end();
    expect(sent).toEqual([{ level: 'warning', logger: 'printer', data: '\\u001b[2Jcleared' }]);
  });

  it('sends 1000 lines of a call across its pieces, then one warning with what was not sent', () => {
    const { sent, log, take } = callLog('debug');
    for (let piece = 0; piece < 3; piece += 1) {
      take([{ stream: 'stdout', text: 'line\n'.repeat(500) }], piece === 2 ? 42 : 0);
    }
    log.end();
    expect(sent).toHaveLength(1001);
    expect(sent.at(-1)).toEqual({
      level: 'warning',
      logger: 'printer',
      data: 'output not sent: 500 more lines and 42 bytes the host dropped',
    });
  });

  it('sends an endless line without a newline in cut pieces rather than holding it', () => {
    const { sent, take } = callLog('info');
    for (let piece = 0; piece < 5; piece += 1) take([{ stream: 'stdout', text: 'y'.repeat(3000) }]);
    expect(sent.length).toBeGreaterThan(0);
    expect(String(sent[0]?.['data'])).toMatch(/^y{2000}… \(\d+ more characters\)$/);
  });
});
