/**
 * From the options a caller wrote to the settings the host's parts read: every option checked when
 * the host is built (messages in p-retry's style), every default filled in, then one slice per part
 * (the pools, the declaration reader, the calls' outcomes, the process tier) put together.
 */
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ToolHostError } from '../boundary/errors.js';
import type { AddonAllowance } from '../calls/addons.js';
import type { PoolSettings } from '../calls/domain-pools.js';
import type { InvokeSettings } from '../calls/invoke.js';
import { assertTierSupported, ISOLATION_TIERS, type IsolationTier } from '../calls/isolation.js';
import type { ReadLimits } from '../declaration/reader.js';
import { checkedSecretValues } from '../process/network/secrets/granted-secrets.js';
import { SecretRedactor } from '../process/network/secrets/redact.js';
import type { ProcessSettings } from '../process/process-domains.js';
import { type Clock, DEFAULT_REREAD_DELAYS_MS, systemClock } from '../registry/reread-schedule.js';
import { DEFAULT_SCHEMA_LIMITS, type SchemaLimits } from '../schema/json-schema.js';
import { expectBoolean, expectNonNegativeInteger, expectPositiveInteger, show } from '../shared/expect.js';
import { sanitizingLogger, stderrLogger } from '../shared/logger.js';
import { tempRootName } from '../snapshot/layout.js';
import type { StoreSettings } from '../snapshot/snapshot.js';
import { storeSettings } from '../snapshot/store-location.js';
import { networkSettings } from './network-options.js';
import type { ToolHostOptions } from './options.js';

/** The options with their defaults filled in. */
export interface Settings extends PoolSettings, InvokeSettings {
  rereadDelaysMs: readonly number[];
  clock: Clock;
  maxConcurrentSelftests: number;
  /** The tier chosen by name, or undefined for the strongest this machine has (found at the first load). */
  isolation: IsolationTier | undefined;
  cores: number;
  schemaLimits: SchemaLimits;
  /** The declaration reader's slice. */
  readLimits: ReadLimits;
  /** An absolute path, or undefined for no lock. */
  lockFile: string | undefined;
  store: StoreSettings;
  /** `exposeSecretValuesToThreadTiers`. */
  exposeSecretValuesToThreadTiers: boolean;
}

/**
 * Workers a host runs at once unless told otherwise: dozens of active packages at a thread or two
 * each, at some 10 to 30 MB a worker.
 */
const DEFAULT_MAX_WORKERS = 64;

/** The options that take a positive integer. */
const POSITIVE_INTEGERS = [
  'callHeapMb',
  'callStackMb',
  'readHeapMb',
  'readTimeoutMs',
  'maxThreadsPerPool',
  'maxWorkers',
  'idleTimeoutMs',
  'outputBudgetBytes',
  'maxResultBytes',
  'maxLogChars',
  'maxConcurrentSelftests',
  'maxSchemaBytes',
  'maxSchemaDepth',
  'schemaCompileBudgetMs',
  'processMemoryMb',
  'cacheMaxMb',
] as const;

/** Checks every option and fills in the defaults. */
export function resolveSettings(options: ToolHostOptions): Settings {
  checkOptions(options);
  const cores = availableParallelism();
  const secretValues = checkedSecretValues(options.secrets);
  const redactor = new SecretRedactor(secretValues);
  // A granted value never reaches the host's log, whoever wrote the message.
  const logger = redactor.logger(sanitizingLogger(options.logger ?? stderrLogger));
  const readLimits = readLimitsOf(options);
  const shared = {
    dataDir: options.dataDir ?? join(tmpdir(), 'toolhost-data'),
    tmpRoot: join(options.tempRoot ?? tmpdir(), tempRootName()),
    // Worker-provided text (fault messages, left-out reasons, tool printing) reaches the logger as data.
    logger,
    allowAddons: options.allowAddons === undefined ? undefined : copyAllowance(options.allowAddons),
    secretValues,
    redactor,
    exposeSecretValuesToThreadTiers: options.exposeSecretValuesToThreadTiers === true,
  };
  return {
    ...shared,
    ...poolSlice(options, cores),
    ...outcomeSlice(options),
    ...processSlice(options, readLimits),
    rereadDelaysMs: options.rereadDelaysMs ?? DEFAULT_REREAD_DELAYS_MS,
    clock: options.clock ?? systemClock,
    maxConcurrentSelftests: options.maxConcurrentSelftests ?? cores,
    isolation: options.isolation,
    cores,
    schemaLimits: readLimits.schema,
    readLimits,
    lockFile: options.lockFile === undefined ? undefined : resolve(options.lockFile),
    store: storeSettings(options),
  };
}

/** Throws `INVALID_OPTION` for the first option of the wrong kind. */
function checkOptions(options: ToolHostOptions): void {
  for (const key of POSITIVE_INTEGERS) expectPositiveInteger(key, options[key]);
  expectNonNegativeInteger('timeoutGraceMs', options.timeoutGraceMs);
  expectAddonAllowance(options.allowAddons);
  expectBoolean('errorStacksToModel', options.errorStacksToModel);
  expectBoolean('exposeSecretValuesToThreadTiers', options.exposeSecretValuesToThreadTiers);
  if (options.isolation !== undefined) expectTier('isolation', options.isolation);
  expectRereadDelays(options.rereadDelaysMs);
  expectClock(options.clock);
  expectLockFile('lockFile', options.lockFile);
  if (options.cacheDir !== undefined && (typeof options.cacheDir !== 'string' || options.cacheDir === '')) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`cacheDir\` to be a non-empty string, got ${show(options.cacheDir)}`,
    );
  }
}

/** What the pools read to start and bound call workers (the shared fields aside). */
function poolSlice(options: ToolHostOptions, cores: number) {
  return {
    callHeapMb: options.callHeapMb ?? 128,
    callStackMb: options.callStackMb ?? 4,
    timeoutGraceMs: options.timeoutGraceMs ?? 100,
    maxThreadsPerPool: options.maxThreadsPerPool ?? cores,
    maxWorkers: options.maxWorkers ?? DEFAULT_MAX_WORKERS,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    maxResultBytes: options.maxResultBytes ?? 10 * 1024 * 1024,
    maxLogChars: options.maxLogChars ?? 65_536,
    env: allowedEnv(options.envAllowList),
  } satisfies Partial<PoolSettings>;
}

/** What turns a call's reply into the outcome the model reads. */
function outcomeSlice(options: ToolHostOptions) {
  return {
    outputBudgetBytes: options.outputBudgetBytes ?? 32_768,
    errorStacksToModel: options.errorStacksToModel === true,
  } satisfies Partial<InvokeSettings>;
}

/** What the process tier reads beyond the shared fields: its network, memory and reads' bounds. */
function processSlice(options: ToolHostOptions, readLimits: ReadLimits) {
  const network = networkSettings(options);
  return {
    allowNetwork: network.allowNetwork,
    network,
    processMemoryMb: options.processMemoryMb ?? 1024,
    readHeapMb: readLimits.heapMb,
    readTimeoutMs: readLimits.timeoutMs,
  } satisfies Partial<ProcessSettings>;
}

/** The declaration reader's bounds. */
function readLimitsOf(options: ToolHostOptions): ReadLimits {
  return {
    heapMb: options.readHeapMb ?? 64,
    timeoutMs: options.readTimeoutMs ?? 5_000,
    schema: {
      maxSchemaBytes: options.maxSchemaBytes ?? DEFAULT_SCHEMA_LIMITS.maxSchemaBytes,
      maxSchemaDepth: options.maxSchemaDepth ?? DEFAULT_SCHEMA_LIMITS.maxSchemaDepth,
    },
    schemaCompileBudgetMs: options.schemaCompileBudgetMs ?? 250,
  };
}

/** The allowed variables that are set, with the values they have now. */
function allowedEnv(allowList: unknown = []): Record<string, string> {
  if (!Array.isArray(allowList) || !allowList.every((name) => typeof name === 'string')) {
    throw new ToolHostError('INVALID_OPTION', 'Expected `envAllowList` to be an array of variable names');
  }
  const env: Record<string, string> = {};
  for (const name of allowList) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** `allowAddons`: a boolean, or a list of package names. */
function expectAddonAllowance(value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return;
  if (Array.isArray(value) && value.every((name) => typeof name === 'string' && name !== '')) return;
  throw new ToolHostError(
    'INVALID_OPTION',
    `Expected \`allowAddons\` to be a boolean or an array of package names, got ${show(value)}`,
  );
}

/** A list is copied (and frozen): a caller's later change to its array changes nothing here. */
function copyAllowance(allowance: AddonAllowance): AddonAllowance {
  return typeof allowance === 'boolean' ? allowance : Object.freeze([...allowance]);
}

function expectRereadDelays(delays: unknown): void {
  if (delays === undefined) return;
  if (Array.isArray(delays) && delays.every((ms) => Number.isSafeInteger(ms) && ms >= 0)) return;
  throw new ToolHostError(
    'INVALID_OPTION',
    `Expected \`rereadDelaysMs\` to be an array of non-negative integers, got ${show(delays)}`,
  );
}

function expectClock(clock: unknown): void {
  if (clock === undefined) return;
  const candidate = clock as Partial<Clock> | null;
  if (
    typeof clock === 'object' &&
    candidate !== null &&
    typeof candidate.now === 'function' &&
    typeof candidate.sleep === 'function'
  ) {
    return;
  }
  throw new ToolHostError(
    'INVALID_OPTION',
    'Expected `clock` to be an object with `now()` and `sleep(ms, signal)`',
  );
}

/** Checks a lock file option: a path (the file itself is read by the lock). */
export function expectLockFile(name: string, value: unknown): void {
  if (value === undefined || (typeof value === 'string' && value !== '')) return;
  throw new ToolHostError('INVALID_OPTION', `Expected \`${name}\` to be a file path, got ${show(value)}`);
}

/** Checks an isolation tier option (and that this Node can run it). */
export function expectTier(name: string, value: unknown): void {
  if (!ISOLATION_TIERS.includes(value as IsolationTier)) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`${name}\` to be one of ${ISOLATION_TIERS.map((tier) => `'${tier}'`).join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  assertTierSupported(value as IsolationTier);
}
