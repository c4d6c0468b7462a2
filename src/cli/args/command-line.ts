/**
 * What `toolhost` makes of a command line: one typed object per command. Each field holds one flag
 * of the declaration in `flags.ts` (its `field`), or a positional argument.
 */
import type { IsolationTier } from '../../calls/isolation.js';
import type { CommandName } from './command-names.js';

/** Options every command that hosts tools takes. */
export interface HostArgs {
  json: boolean;
  /** `--allow-env NAME`: environment variables passed to tools. */
  allowEnv: string[];
  /** `--allow-addons PACKAGE`: packages whose tools may load native addons in every tier. */
  allowAddons: string[];
  /** `--heap-mb`: heap limit of each tool worker. */
  heapMb: number | undefined;
  /** `--isolation`: the isolation tier (checked here, so a mistake names the flag). */
  isolation: IsolationTier | undefined;
  /** `--process-memory-mb`: the memory limit of each package process (the process tier). */
  processMemoryMb: number | undefined;
  /** `--lock FILE`: offer only what this lock file pins (an absolute path). */
  lock: string | undefined;
  /** `--allow-network PACKAGE[=HOST,...]`: the host's `allowNetwork`, per package (none given: none). */
  allowNetwork: Record<string, true | string[]> | undefined;
  /** `--secret NAME[=VAR]`: the host's `secrets`, values read from the environment (none given: none). */
  secrets: Record<string, string> | undefined;
}

export interface ListArgs extends HostArgs {
  command: 'list';
  paths: string[];
}

/** Commands that run tools for real keep what tools save (and cut outputs) in a dataDir. */
export interface DataDirArgs {
  /** `--data-dir`, else `TOOLHOST_DATA_DIR`, else the library's default (`<os tmpdir>/toolhost-data`). */
  dataDir: string | undefined;
}

export interface CallArgs extends HostArgs, DataDirArgs {
  command: 'call';
  path: string;
  tool: string;
  /** The JSON arguments as typed; `-` reads them from stdin. @default '{}' */
  argsJson: string;
  timeoutMs: number | undefined;
  sessionId: string | undefined;
}

export interface SelftestArgs extends HostArgs {
  command: 'selftest';
  paths: string[];
  timeoutMs: number | undefined;
  /** `--jobs N`: selftests running at once. */
  jobs: number | undefined;
  requireSelftests: boolean;
}

export interface ChatArgs extends HostArgs, DataDirArgs {
  command: 'chat';
  toolPaths: string[];
  model: string | undefined;
  prompt: string;
  maxIterations: number | undefined;
  maxTokens: number | undefined;
  timeoutMs: number | undefined;
}

/** Where `serve --http` listens. */
export interface HttpAddress {
  /** As typed, without brackets around an IPv6 address. @default '127.0.0.1' */
  host: string;
  /** 0 asks the system for a free port (the bound address is printed on stderr). */
  port: number;
}

export interface ServeArgs extends HostArgs, DataDirArgs {
  command: 'serve';
  /** Packages or modules to serve, as typed. */
  paths: string[];
  /** `--watch DIR` (repeatable): folders of packages, served and watched. */
  watch: string[];
  /** `--http [host:]port`; stdio without it. */
  http: HttpAddress | undefined;
  /** The bearer token every HTTP request must carry, read from the variable `--token-env` names. */
  token: string | undefined;
  /** `--allow-origin ORIGIN` (repeatable): browser origins allowed to call the HTTP endpoint. */
  allowOrigins: string[];
  timeoutMs: number | undefined;
  /** `--threads N`: calls of one package running at once (its worker threads). */
  threads: number | undefined;
}

/** `toolhost pin`: the host options (its `lock` is the file written, never one enforced). */
export interface PinArgs extends HostArgs {
  command: 'pin';
  paths: string[];
  /** The lock file to write, absolute. @default toolhost.lock.json in the working directory */
  lock: string;
}

export interface McpConfigArgs {
  command: 'mcp-config';
  json: boolean;
  /** Packages or modules to serve, as typed (made absolute when printed). */
  paths: string[];
  /** `--name`: the server's name in the client's list. @default 'toolhost' */
  name: string;
  /** `--http`: the address of the HTTP configurations. @default 127.0.0.1:8765 */
  http: HttpAddress;
  /** `--lock`: the lock file the printed `serve` commands enforce, absolute. */
  lock: string | undefined;
}

export interface InitArgs {
  command: 'init';
  json: boolean;
  /** The folder to create the package in, as typed. @default '.' */
  dir: string;
}

export interface DoctorArgs {
  command: 'doctor';
  json: boolean;
}

export type ParsedCommandLine =
  | ListArgs
  | CallArgs
  | SelftestArgs
  | ChatArgs
  | ServeArgs
  | McpConfigArgs
  | InitArgs
  | PinArgs
  | DoctorArgs
  | { command: 'help'; topic: CommandName | undefined }
  | { command: 'version' };

/** A field of a parsed command that a flag fills (the `field` of its declaration). */
export type FlagField = Exclude<
  Extract<
    keyof (HostArgs &
      DataDirArgs &
      CallArgs &
      SelftestArgs &
      ChatArgs &
      ServeArgs &
      McpConfigArgs &
      InitArgs),
    string
  >,
  'command' | 'paths' | 'path' | 'tool' | 'argsJson' | 'prompt' | 'token' | 'dir'
>;
