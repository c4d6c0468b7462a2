/**
 * docs/cli.md's table of `toolhost`'s options, made from the flag declaration (a test holds the
 * page to it): per flag, how it is typed, the commands that take it and what it does.
 */
import { COMMANDS, type CommandName } from './command-names.js';
import { FLAGS, type Flag } from './flags.js';
import { flagSyntax } from './help.js';

/** The table as Markdown, one row per flag, in the declaration's order. */
export function optionTable(): string {
  const rows = FLAGS.map(
    (flag) => `| \`${flagSyntax(flag)}\` | ${commandsText(flag.commands)} | ${meaning(flag)} |`,
  );
  return ['| option | commands | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `all`, `all but serve`, or the commands by name. */
function commandsText(commands: readonly CommandName[]): string {
  if (commands.length === COMMANDS.length) return 'all';
  const others = COMMANDS.filter((command) => !commands.includes(command));
  if (others.length === 1) return `all but ${others[0]}`;
  return commands.join(', ');
}

/** The help, the default (a command's own named as such) and what the manual adds, as Markdown. */
function meaning(flag: Flag): string {
  const parts = [flag.help];
  if (flag.default !== undefined) parts.push(`(default ${flag.default})`);
  for (const command of flag.commands) {
    const fallback = flag.fallbackIn?.[command];
    if (fallback === undefined) continue;
    parts.push(flag.commands.length === 1 ? `(default ${fallback})` : `(${command}'s default ${fallback})`);
  }
  if (flag.manual !== undefined) parts.push(flag.manual);
  // Markdown would take `<os tmpdir>` for a tag and `|` for the end of a cell.
  return parts.join(' ').replaceAll('<', '&lt;').replaceAll('|', '\\|');
}
