/**
 * A module whose declaration is bad is left out with its reason, logged once, the same way in every
 * tier (the process tier reads it in a throwaway process of the package's own). Each tier's
 * catalogue runs on one host, one bad module after another, and the host serves calls after each.
 */
import { describe, expect, it } from 'vitest';
import type { ModuleStatus } from '../dist/src/index.js';
import { ALL_TIERS } from './support/boundary.js';
import { expectHostFine, fixtureModule, statusesOf, statusOf } from './support/host-harness.js';
import { LEFT_OUT } from './support/left-out-catalogue.js';
import { useSharedHost } from './support/shared-host.js';

describe.each(ALL_TIERS)("isolation: '%s', a module whose declaration is bad", (isolation) => {
  const shared = useSharedHost({ isolation });

  it.each(LEFT_OUT)(
    '$behaviour: left out as $code, logged once, and the host still serves calls',
    async ({ file, at, code, reason: what }) => {
      const reason = `${at}: ${what}`;
      const path = fixtureModule(file);
      const lines = shared.linesFromNow();

      const report = await shared.load(path);

      const { host } = shared;
      const expected: ModuleStatus = { path, source: path, state: 'left-out', code: code as never, reason };
      expect(report.source).toBe(path);
      expect(report.kind).toBe('module');
      expect(statusesOf(report.modules)).toStrictEqual([expected]);
      expect(statusOf(host.status().find((status) => status.path === path))).toStrictEqual(expected);
      expect(host.list().map((tool) => tool.name)).toEqual(['echo']);
      expect(
        lines()
          .filter((line) => line.level === 'warn' && line.message.includes(path))
          .map((line) => line.message),
      ).toEqual([`left out ${path}: ${reason}`]);
      await expectHostFine(host);
    },
  );
});
