/**
 * The call worker: piscina's handler for every call of one trust domain (package). Tool modules are
 * imported per task, never as the pool's `filename`, so a module that throws at load is one failed
 * call and not a wedged pool. What a call does is call-runner.ts's; this file is the worker's side
 * of it: its private line to the host, its settings from `workerData`, the lockdown of its ports,
 * and one call at a time when piscina hands it a second task while the first runs.
 */
import { threadId, workerData } from 'node:worker_threads';
import {
  type CallReply,
  type CallTask,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from '../../src/boundary/protocol.js';
import { lockdown, takePrivateChannel } from '../guard/lockdown.js';
import { callRunner, type GivenSettings, prepareForTools } from './call-runner.js';
import { replySeal } from './own-replies.js';
import { inTurn, setClaims } from './queue.js';

/** `claims`: the memory of queued calls' claims, shared with the host (see queue.ts). */
type CallWorkerData = GivenSettings & { claims?: SharedArrayBuffer };

// First of all, before anything a tool could replace: the line to the host.
const channel = takePrivateChannel();
const post = (message: WorkerMessage) => channel.post(message);
post({ tag: WORKER_MESSAGE_TAG, type: 'hello', threadId, osThreadId: channel.osThreadId });

const given = workerData as CallWorkerData;
// Out of tool code's reach: a tool that could write a claim could start or drop its own package's
// queued calls.
setClaims(given.claims);
delete given.claims;
const settings = await prepareForTools(given, post, process.exit.bind(process));

// A reply the host would refuse as over its caps (measured differently there) never crosses: about
// the result's bytes and the logs' characters (up to 3 bytes each in JSON), with room to spare.
const maxReplyBytes = 2 * (settings.maxResultBytes + 3 * settings.maxLogChars) + 65_536;
// The replies this worker builds of nothing but what it checked cross without a second walk.
const seal = replySeal({ maxLogChars: settings.maxLogChars, maxReplyBytes });
const lockdownOptions = Object.freeze({ maxReplyBytes, vouchesFor: seal.vouchesFor });
const runTask = callRunner({ settings, post, seal: seal.seal });

export default async function callTool(task: CallTask): Promise<CallReply | string | null> {
  // piscina's start-up is over by the first task; from here on no tool may reach the ports.
  lockdown(lockdownOptions);
  if (task.kind === 'wake') return null;
  return inTurn(task, () => runTask(task));
}
