/** The `toolhost` commands, by the word that names each on the command line. */
export const COMMANDS = [
  'list',
  'call',
  'selftest',
  'chat',
  'serve',
  'mcp-config',
  'init',
  'pin',
  'doctor',
] as const;

export type CommandName = (typeof COMMANDS)[number];
