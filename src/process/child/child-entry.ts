/**
 * Where a package's process starts: named once, for the sandbox's command line (sandbox.ts) and for
 * telling the host's own package processes from a tool's (the CLI's selftest reads command lines).
 * It imports nothing else of the tier, so asking costs no start-up.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { srcFile } from '../../own-files.js';

/** The entry point of a package's process. */
export const CHILD_MAIN = realpathSync(fileURLToPath(srcFile('process/child/child-main.js')));
