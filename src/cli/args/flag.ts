/** What one flag of `toolhost` is: the shape of each entry of the declaration in flags.ts. */
import type { ToolHostOptions } from '../../host/options.js';
import type { ToolServerOptions } from '../../mcp/tool-server.js';
import type { FlagField } from './command-line.js';
import type { CommandName } from './command-names.js';

/**
 * How a flag's value is read: `switch` takes none; `text` one string (`texts` repeatable); `count` a
 * positive integer; `tier` an isolation tier this Node runs; `file` a path, made absolute where it
 * was typed; `grants` `PKG[=HOST,...]`, repeatable; `address` `[HOST:]PORT`; `secrets` `NAME[=VAR]`,
 * repeatable, each value read from the environment then.
 */
export type FlagKind =
  | 'switch'
  | 'text'
  | 'texts'
  | 'count'
  | 'tier'
  | 'file'
  | 'grants'
  | 'address'
  | 'secrets';

export interface Flag {
  /** As typed after `--`. */
  name: string;
  /** The one-letter form, typed after `-`. */
  short?: string;
  kind: FlagKind;
  /** What the value is called in the help and docs/cli.md (`N`, `MS`, `DIR`). */
  value?: string;
  /** Where the parsed command line keeps it; none for flags its command reads itself. */
  field?: FlagField;
  /** The commands that take it (any other refuses it as an unknown option). */
  commands: readonly CommandName[];
  /** What it does, as the help and docs/cli.md's table say it. */
  help: string;
  /** The help's wording in one command, where the flag does something narrower there. */
  helpIn?: Partial<Record<CommandName, string>>;
  /** What docs/cli.md's table adds to `help` (more than a help line holds). */
  manual?: string;
  /** The default when the flag is absent, as the help and docs/cli.md show it. */
  default?: string;
  /** Per command, the value read as if typed when the flag is absent (shown as its default). */
  fallbackIn?: Partial<Record<CommandName, string>>;
  /** The environment variable read when the flag is absent (an empty one counts as unset). */
  env?: string;
  /** The ToolHost option it sets. */
  hostOption?: Extract<keyof ToolHostOptions, string>;
  /** The MCP server's option it sets (`serve`). */
  serveOption?: Extract<keyof ToolServerOptions, string>;
  /** An earlier name of it: typed, it is a usage error that names this one. */
  renamedFrom?: string;
}
