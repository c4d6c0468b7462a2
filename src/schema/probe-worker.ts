/**
 * The schema probe: a trusted worker (no tool code ever runs in it) that compiles a large parameter
 * schema once, so the host learns what the compile costs without stopping its own event loop to find
 * out. The host times each compile itself, from its request to this worker's answer.
 */
import { parentPort } from 'node:worker_threads';
import { compileParameterSchema, type SchemaLimits } from './json-schema.js';

interface ProbeRequest {
  id: number;
  schema: unknown;
  limits: SchemaLimits;
}

parentPort?.on('message', (request: ProbeRequest) => {
  const checked = compileParameterSchema(request.schema, request.limits);
  parentPort?.postMessage(
    checked.ok ? { id: request.id, ok: true } : { id: request.id, ok: false, message: checked.message },
  );
});
// Ajv is loaded and warmed up: from now on a request's time is its compile's.
compileParameterSchema({ type: 'object', properties: { warm: { type: 'string' } } });
parentPort?.postMessage('ready');
