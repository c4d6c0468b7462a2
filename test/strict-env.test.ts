/**
 * Environment secrets: workers start with an empty environment in every tier, and a diagnostic
 * report (which lists the whole process's environment, whatever the worker's `env`) is given without
 * it. (In the process tier the process itself has an empty environment too.)
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const SECRET = 'sk-ant-fake-secret-for-env-test';

let root: string;
let host: ToolHost;

beforeEach(async () => {
  root = await tempDir('toolhost-strict-env-');
  process.env['ANTHROPIC_API_KEY'] = SECRET;
});

afterEach(async () => {
  delete process.env['ANTHROPIC_API_KEY'];
  await host?.close();
  await removeDir(root);
});

for (const isolation of ['worker', 'strict', 'process'] as const) {
  describe(`isolation: '${isolation}'`, () => {
    beforeEach(async () => {
      host = new ToolHost({ dataDir: join(root, 'data'), isolation, logger: recordingLogger() });
      const report = await host.load(HOSTILE);
      expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    });

    it("a tool that reads process.env finds it empty, without the host's API key", async () => {
      const outcome = await host.call('strict_env_secrets', {});
      expect(outcome.isError).toBe(false);
      expect(JSON.parse(outcomeText(outcome))).toEqual({ keys: [], apiKey: null });
    });

    it("a tool that asks for a diagnostic report gets one without the host's environment", async () => {
      const outcome = await host.call('strict_report_env', { needle: SECRET });
      expect(outcome.isError).toBe(false);
      expect(JSON.parse(outcomeText(outcome))).toEqual({ reportHasNeedle: false, environmentVariables: 0 });
      expect(outcomeText(outcome)).not.toContain(SECRET);
    });
  });
}
