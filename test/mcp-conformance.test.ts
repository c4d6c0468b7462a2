/**
 * The protocol's own conformance suites (npm devDependencies: 0.1.16 for 2025-11-25, 0.2.0-alpha.12
 * for 2026-07-28) against `toolhost serve --http` with the package of the tools their scenarios
 * call, one scenario at a time. The suites need Node 22 or later: on Node 20 this file is skipped
 * (CI runs it on 22, 24 and 26). The checks toolhost fails on purpose are listed, with why, in
 * fixtures/mcp/conformance/expected-failures.yaml.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir, REPO } from './support/cli-run.js';
import { exited, type HttpServe, MCP_FIXTURES, startHttp } from './support/mcp-serve.js';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const FIXTURE = join(MCP_FIXTURES, 'conformance');
const EXPECTED_FAILURES = join(FIXTURE, 'expected-failures.yaml');

const SUITES = {
  '2025-11-25': join(REPO, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
  '2026-07-28': join(REPO, 'node_modules/conformance-2026/dist/index.js'),
} as const;

const TOOL_SCENARIOS = [
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-error',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-progress',
  'json-schema-2020-12',
  'dns-rebinding-protection',
];
const cases = [
  ...['server-initialize', 'ping', 'logging-set-level', 'tools-call-with-logging', ...TOOL_SCENARIOS].map(
    (scenario) => ({ revision: '2025-11-25' as const, scenario }),
  ),
  ...['server-stateless', 'caching', 'http-header-validation', ...TOOL_SCENARIOS].map((scenario) => ({
    revision: '2026-07-28' as const,
    scenario,
  })),
];

function runSuite(suite: string, url: string, scenario: string) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [suite, 'server', '--url', url, '--scenario', scenario, '--expected-failures', EXPECTED_FAILURES],
      { cwd: REPO, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

describe.skipIf(NODE_MAJOR < 22)(
  'the MCP conformance suites (they need Node 22+: skipped on Node 20)',
  () => {
    const tmp = freshDir('toolhost-mcp-conformance');
    let serve: HttpServe;

    beforeAll(async () => {
      serve = await startHttp([FIXTURE], tmp.path);
    });
    afterAll(async () => {
      if (serve !== undefined) {
        serve.child.kill('SIGTERM');
        await exited(serve.child);
      }
      tmp.remove();
    });

    it.each(cases)(
      'passes $scenario of the $revision suite',
      async ({ revision, scenario }) => {
        const result = await runSuite(SUITES[revision], serve.url, scenario);
        // The suite's own report says which check failed and why.
        expect(result.code, result.output).toBe(0);
      },
      120_000,
    );
  },
);
