/**
 * A tool's printing never reaches the host's real stdout or stderr, which may be a protocol
 * channel (an MCP server over stdio, a JSON CLI). Each host here runs in a child process of its own,
 * so the test reads what really reached that process's stdout and stderr: none of the markers the
 * tools wrote, whichever way they wrote them, including through Node's own fatal-exception handler
 * (which prints straight to the process's stderr when it fails), nor through a socket on the
 * process's descriptor 1.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL_TIERS, boundaryFixture, runHostInChild, TIERS } from './support/boundary.js';
import { answered, failed } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const ROUTES = [
  'Writable.prototype.write',
  'deleted write',
  'process._rawDebug',
  'fs.writeSync',
  'fs.write',
  'fs.writevSync',
  'fs.writev',
  'fs.writeFileSync',
  'console after patching',
  'a Console of its own',
  'the stream ended',
];
const WROTE = answered(JSON.stringify({ tried: 1, failed: [] }));
const UNSERIALIZABLE = failed(
  'TOOL_CRASHED',
  "the tool's worker crashed: Serializing an uncaught exception failed",
);
/** The same in a package process: Node's handler ends the process, its report on a stderr no one shows. */
const FATAL_IN_PROCESS = failed('TOOL_CRASHED', "the tool's process exited with code 1");

let root: string;
beforeEach(async () => {
  root = await tempDir('toolhost-stdio-');
});
afterEach(async () => {
  await removeDir(root);
});

for (const isolation of ALL_TIERS) {
  describe(`isolation: '${isolation}'`, () => {
    it("markers written around the output capture, by every route, never reach the host's stdout or stderr", async () => {
      const run = await runHostInChild({
        load: [boundaryFixture('call-writes-past-the-capture.js')],
        options: { dataDir: join(root, 'data'), isolation },
        calls: ROUTES.map((route) => ({ tool: 'call_writes_past_the_capture', args: { route } })),
      });

      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('');
      // Every route but the last wrote and answered; ending the worker's stdout ends its worker. A
      // package process's stdout is a null device of its own: the last route ends that, and answers.
      expect(run.report?.outcomes.slice(0, -1)).toStrictEqual(ROUTES.slice(0, -1).map(() => WROTE));
      expect(run.report?.outcomes.at(-1)?.isError).toBe(isolation !== 'process');
      // What the capture kept went to the 'output' event instead.
      expect(run.report?.outputs.join('')).toContain('MARKER-fswriteSync-stdout');
      expect(run.report?.outputs.join('')).toContain('MARKER-processrawDebug-stderr');
      expect(run.report?.outputs.join('')).toContain('MARKER-fswritevSync-stderr');
    });

    it("a tool that leaves Node's fatal-exception handler to run, or breaks it, prints nothing to the host's stderr", async () => {
      const hows = [
        'makes process.exit throw',
        'makes process.exit return',
        "throws from an 'exit' listener",
        'replaces process._fatalException',
      ];
      const run = await runHostInChild({
        load: [
          boundaryFixture('call-removes-uncaught-listener.js'),
          boundaryFixture('call-breaks-fatal-exception-handler.js'),
          boundaryFixture('decl-throws-in-a-callback.js'),
        ],
        options: { dataDir: join(root, 'data'), isolation },
        calls: [
          { tool: 'call_removes_uncaught_listener', args: {} },
          ...hows.map((how) => ({ tool: 'call_breaks_fatal_exception_handler', args: { how } })),
        ],
      });

      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('');
      expect(run.report?.loaded).toEqual(['offered', 'offered', 'left-out']);
      const fatal = isolation === 'process' ? FATAL_IN_PROCESS : UNSERIALIZABLE;
      expect(run.report?.outcomes).toStrictEqual([
        fatal,
        fatal,
        fatal,
        fatal,
        answered("refused: Cannot assign to read only property '_fatalException' of object '#<process>'"),
      ]);
      // (The strict tier's once-per-host notice about what it can't contain on this Node aside.)
      expect(
        run.report?.lines.filter((line: string) => !line.startsWith('warn strict isolation on')),
      ).toStrictEqual([
        `warn left out ${boundaryFixture('decl-throws-in-a-callback.js')}: decl-throws-in-a-callback.js: reading the declaration crashed: Serializing an uncaught exception failed`,
      ]);
    });
  });
}

// The process tier's descriptor 1 is a null device of its own process (process-stdio.test.ts).
describe('descriptors the process already has open: a tool may use only its own', () => {
  it.each(TIERS)(
    "in isolation '%s', a socket a tool opens on file descriptor 1 is refused with EBADF and writes nothing to the host's stdout",
    async (isolation) => {
      const run = await runHostInChild({
        load: [boundaryFixture('call-writes-to-descriptor-1.js')],
        options: { dataDir: join(root, 'data'), isolation },
        calls: [{ tool: 'call_writes_to_descriptor_1', args: {} }],
      });

      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.report?.outcomes).toStrictEqual([failed('TOOL_THREW', 'open EBADF')]);
    },
  );
});
