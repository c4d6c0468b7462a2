/**
 * The throwaway declaration reader: one worker per module read. Imports the tool module, reads each
 * declaration field (a value or a zero-argument function), checks it is plain data and posts a
 * {@link ReadReply}. The host bounds its heap and its time, checks the reply again (the module ran
 * here and could have changed anything) and terminates the worker after.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { threadId, workerData } from 'node:worker_threads';
import { describeThrown } from '../src/boundary/errors.js';
import { checkPlainData, MAX_DATA_DEPTH } from '../src/boundary/plain-data.js';
import {
  DECLARATION_FIELDS,
  type FieldRead,
  MAX_FIELD_BYTES,
  MISNAMED_SCHEMA_FIELDS,
  type MisnamedSchema,
  type RawDeclaration,
  type ReadReply,
  type ReadRequest,
  WORKER_MESSAGE_TAG,
} from '../src/boundary/protocol.js';
import { firstLocation, stackOf } from '../src/boundary/stack-frames.js';
import { hardenWorker } from './guard/harden.js';
import { lockdown, takePrivateChannel } from './guard/lockdown.js';
import { fromStandardSchema } from './standard-schema.js';
import { toolSource } from './tool-exports.js';

const channel = takePrivateChannel();
channel.post({ tag: WORKER_MESSAGE_TAG, type: 'hello', threadId, osThreadId: channel.osThreadId });
const request = { moduleUrl: String((workerData as ReadRequest).moduleUrl) };
// Addons as the package's calls have them: its tier's flags say (`--no-addons` where they are off),
// read before any of its code runs. A module that loads an addon at its top level needs them here.
hardenWorker({ allowAddons: !process.execArgv.includes('--no-addons') });
lockdown();

// A module whose top-level await never settles would otherwise let this worker's event loop run
// dry and exit quietly; keeping it alive turns that case into a read that runs over its time bound.
const keepAlive = setInterval(() => {}, 60_000);

/** toolhost's own code (dist/): its frames say nothing about where a module went wrong. */
const OWN = fileURLToPath(new URL('../', import.meta.url));
const NOT_THE_MODULE = [OWN, pathToFileURL(OWN).href];

/** Where an error was thrown, as `file:line:column` (a path of the snapshot), if its stack says. */
function locationOf(error: unknown): { location?: string } {
  const location = firstLocation(stackOf(error), NOT_THE_MODULE);
  return location === undefined ? {} : { location };
}

/** Whether `error` is a syntax error, read without trusting it. */
function isSyntaxError(error: unknown): boolean {
  try {
    return error instanceof SyntaxError;
  } catch {
    return false;
  }
}

async function readField(source: Record<string, unknown>, field: string): Promise<FieldRead> {
  let value: unknown;
  try {
    value = source[field];
    if (typeof value === 'function') value = await (value as () => unknown)();
    if (field === 'parameterSchema' || field === 'outputSchema') {
      const conversion = fromStandardSchema(value, field);
      if (conversion.kind === 'refused') return { state: 'not-plain', message: conversion.message };
      if (conversion.kind === 'converted') value = conversion.value;
    }
  } catch (error) {
    return { state: 'threw', message: describeThrown(error), ...locationOf(error) };
  }
  if (value === undefined) return { state: 'missing' };
  const check = checkPlainData(value, { maxDepth: MAX_DATA_DEPTH, maxBytes: MAX_FIELD_BYTES }, field);
  if (!check.ok) return { state: 'not-plain', message: check.problem };
  return { state: 'value', value: value as never };
}

/** The schema field named as another tool API names it, when that is all the module declares. */
function misnamedSchema(source: Record<string, unknown>): MisnamedSchema | null {
  for (const field of MISNAMED_SCHEMA_FIELDS) {
    if (Object.hasOwn(source, field)) return field;
  }
  return null;
}

async function read(): Promise<ReadReply> {
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(request.moduleUrl)) as Record<string, unknown>;
  } catch (error) {
    const syntax = isSyntaxError(error);
    return {
      ok: false,
      error: {
        code: 'IMPORT_FAILED',
        message: describeThrown(error),
        ...locationOf(error),
        ...(syntax ? { syntaxError: true } : {}),
      },
    };
  }
  try {
    const source = toolSource(namespace);
    const fields: Partial<Record<(typeof DECLARATION_FIELDS)[number], FieldRead>> = {};
    for (const field of DECLARATION_FIELDS) fields[field] = await readField(source, field);
    const declaration: RawDeclaration = {
      name: fields.name as FieldRead,
      description: fields.description as FieldRead,
      parameterSchema: fields.parameterSchema as FieldRead,
      timeoutMs: fields.timeoutMs as FieldRead,
      concurrency: fields.concurrency as FieldRead,
      title: fields.title as FieldRead,
      annotations: fields.annotations as FieldRead,
      outputSchema: fields.outputSchema as FieldRead,
      misnamedSchema: misnamedSchema(source),
      hasRun: typeof source['run'] === 'function',
      hasSelftest: typeof source['selftest'] === 'function',
    };
    return { ok: true, declaration };
  } catch (error) {
    return {
      ok: false,
      error: { code: 'DECLARATION_THREW', message: describeThrown(error), ...locationOf(error) },
    };
  }
}

const reply = await read();
try {
  channel.post(reply);
} catch (error) {
  // A value that passed the plain-data check but still can't be cloned (the module changed it since).
  channel.post({ ok: false, error: { code: 'DECLARATION_THREW', message: describeThrown(error) } });
}
clearInterval(keepAlive);
