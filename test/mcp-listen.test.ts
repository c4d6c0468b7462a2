/**
 * `toolhost serve --watch DIR` and a 2026-07-28 client: the client opens a `subscriptions/listen`
 * stream for `toolsListChanged` and hears `notifications/tools/list_changed` on it when a package
 * added to the folder changes the offered tools, over stdio and over HTTP.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir, writePackage } from './support/cli-run.js';
import { connectHttp, connectStdio, type McpClient } from './support/mcp-clients.js';
import { exited, type HttpServe, startHttp } from './support/mcp-serve.js';

const tool = (name: string) =>
  `export const name = ${JSON.stringify(name)};
export const description = 'the ${name} tool';
export const parameterSchema = { type: 'object' };
export function run() { return ${JSON.stringify(`${name} answers`)}; }
`;

describe.each(['stdio', 'http'] as const)('a 2026-07-28 client listening over %s', (transport) => {
  const tmp = freshDir(`toolhost-mcp-listen-${transport}`);
  const watched = join(tmp.path, 'watched');
  const staging = join(tmp.path, 'staging');
  let client: McpClient;
  let http: HttpServe | undefined;

  beforeAll(async () => {
    mkdirSync(watched);
    mkdirSync(staging);
    writePackage(watched, 'alpha', { 'alpha.js': tool('alpha_tool') });
    const args = ['--watch', watched];
    if (transport === 'stdio') {
      client = await connectStdio('2026-07-28', args, tmp.path);
    } else {
      http = await startHttp(args, tmp.path);
      client = await connectHttp('2026-07-28', http.url);
    }
  });
  afterAll(async () => {
    await client?.close();
    if (http !== undefined) {
      http.child.kill('SIGTERM');
      await exited(http.child);
    }
    tmp.remove();
  });

  it('hears list_changed on its listen stream once a package added to the folder offers a tool', async () => {
    const v2 = client.v2;
    if (v2 === undefined) throw new Error('the 2026-07-28 client is the v2 one');
    const changed = new Promise<void>((resolve) => {
      v2.setNotificationHandler('notifications/tools/list_changed', () => resolve());
    });
    const subscription = await v2.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
    writePackage(staging, 'beta', { 'beta.js': tool('beta_tool') });
    renameSync(join(staging, 'beta'), join(watched, 'beta'));
    await changed;
    expect(await client.listToolNames()).toEqual(['alpha_tool', 'beta_tool']);
    await subscription.close();
  });
});
