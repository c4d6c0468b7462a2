/**
 * Whether a command line asks for toolhost's version (`toolhost --version`): decided by its first
 * word alone, so the command can answer it without loading the parser.
 */
export function asksForVersion(argv: readonly string[]): boolean {
  return argv[0] === '--version';
}
