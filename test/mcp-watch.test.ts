/**
 * `toolhost serve --watch DIR`: the client hears `notifications/tools/list_changed` when a package
 * added to or removed from the folder changes the offered tools, and not when a change leaves them
 * as they were.
 */
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir, writePackage } from './support/cli-run.js';
import { GOOD, type StdioServe, startStdio } from './support/mcp-serve.js';

const tool = (name: string) =>
  `export const name = ${JSON.stringify(name)};
export const description = 'the ${name} tool';
export const parameterSchema = { type: 'object' };
export function run() { return ${JSON.stringify(`${name} answers`)}; }
`;

describe('toolhost serve --watch', () => {
  const tmp = freshDir('toolhost-mcp-watch');
  const watched = join(tmp.path, 'watched');
  const staging = join(tmp.path, 'staging');
  let serve: StdioServe;
  let changes = 0;
  let onChange: () => void = () => {};

  /** Resolves at the next list_changed notification. */
  const nextChange = () =>
    new Promise<void>((resolve) => {
      onChange = resolve;
    });

  /** A package is written elsewhere and moved in whole, so the watcher never sees half of it. */
  const addPackage = (name: string, modules: Record<string, string>) => {
    writePackage(staging, name, modules);
    renameSync(join(staging, name), join(watched, name));
  };

  const names = async () => (await serve.client.listTools()).tools.map((info) => info.name).sort();

  beforeAll(async () => {
    mkdirSync(watched);
    mkdirSync(staging);
    writePackage(watched, 'alpha', { 'alpha.js': tool('alpha_tool') });
    serve = await startStdio(['--watch', watched], tmp.path);
    serve.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
      onChange();
    });
  });
  afterAll(async () => {
    await serve?.client.close();
    tmp.remove();
  });

  it('offers what the folder holds at the start, and says list_changed is supported', async () => {
    expect(await names()).toEqual(['alpha_tool']);
    expect(serve.client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
  });

  it('sends nothing when a package added to the folder offers no tool', async () => {
    addPackage('broken', { 'bad.js': tool('not a valid name') });
    await serve.stderr.waitFor(/left out \S*broken\S*bad\.js/);
    // A round trip after the warning: a notification sent before it would have arrived by now.
    expect(await names()).toEqual(['alpha_tool']);
    expect(changes).toBe(0);
  });

  it('sends list_changed once a package added to the folder offers tools', async () => {
    const changed = nextChange();
    addPackage('beta', { 'beta.js': tool('beta_tool'), 'gamma.js': tool('gamma_tool') });
    await changed;
    expect(await names()).toEqual(['alpha_tool', 'beta_tool', 'gamma_tool']);
    expect(changes).toBe(1);
    const result = await serve.client.callTool({ name: 'beta_tool', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'beta_tool answers' }]);
  });

  it('sends list_changed once a package is removed from the folder', async () => {
    const changed = nextChange();
    rmSync(join(watched, 'beta'), { recursive: true, force: true });
    await changed;
    expect(await names()).toEqual(['alpha_tool']);
    expect(changes).toBe(2);
  });

  it('never showed the client a line it could not parse', () => {
    expect(serve.clientErrors).toEqual([]);
  });
});

describe('toolhost serve --watch beside package paths', () => {
  const tmp = freshDir('toolhost-mcp-watch-beside');
  const watched = join(tmp.path, 'watched');
  let serve: StdioServe;

  beforeAll(async () => {
    mkdirSync(watched);
    writePackage(watched, 'alpha', { 'alpha.js': tool('alpha_tool') });
    serve = await startStdio([GOOD, '--watch', watched], tmp.path);
  });
  afterAll(async () => {
    await serve?.client.close();
    tmp.remove();
  });

  it('offers the packages named and those in the folder, and calls both', async () => {
    const { tools } = await serve.client.listTools();
    expect(tools.map((info) => info.name)).toEqual(expect.arrayContaining(['alpha_tool', 'say']));
    const changed = new Promise<void>((resolve) =>
      serve.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    rmSync(join(watched, 'alpha'), { recursive: true, force: true });
    await changed;
    const after = (await serve.client.listTools()).tools.map((info) => info.name);
    expect(after).not.toContain('alpha_tool');
    expect(await serve.client.callTool({ name: 'say', arguments: { text: 'still here' } })).toMatchObject({
      content: [{ type: 'text', text: 'you said: still here' }],
    });
  });
});
