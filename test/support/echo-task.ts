/**
 * A task for a trust domain pool (calls/worker-pool.ts) driven directly, without a host: a call of
 * the echo fixture (fixtures/modules/echo.js), which answers the text it is given.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CallTask } from '../../dist/src/boundary/protocol.js';

const ECHO = pathToFileURL(fileURLToPath(new URL('../../fixtures/modules/echo.js', import.meta.url))).href;

/** The task `taskId` (its call id too), echoing `text`. */
export function echoTask(taskId: string, text = taskId): CallTask {
  return {
    kind: 'run',
    taskId,
    callId: taskId,
    sessionId: 'default',
    moduleUrl: ECHO,
    args: { text },
    withheld: [],
    timeoutMs: 600_000,
  };
}
