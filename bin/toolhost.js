#!/usr/bin/env node
// The `toolhost` command, as package.json's "bin" names it. It lives outside dist/ so that the bin
// entry names a file that is there before the build (`npm publish` and `npm pack` read "bin" before
// their `prepare` script builds dist/, and warn of a missing file), and so that an installation
// whose `prepare` did not run says what to do instead of failing with a stack trace.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (existsSync(main)) {
  await import(main.href);
} else {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(
    `toolhost: this installation is not built (${fileURLToPath(main)} is missing): its "prepare" script builds it; run \`npm run build\` in ${root}, or reinstall with npm allowed to run toolhost's scripts\n`,
  );
  process.exitCode = 1;
}
