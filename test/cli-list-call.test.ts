/**
 * The built `toolhost list` and `toolhost call` on the example packages and on small hostile
 * modules: their output, --json shapes, exit codes, and what they leave in TMPDIR (only the
 * dataDir, and only when a tool keeps data or an output was cut).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDir, PACKAGES, REPO, runCli, writePackage } from './support/cli-run.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;

beforeEach(() => {
  tmp = freshDir('cli-call-tmp');
  work = freshDir('cli-call-work');
});
afterEach(() => {
  tmp.remove();
  work.remove();
});

const run = (args: string[], options: { env?: Record<string, string>; input?: string } = {}) =>
  runCli(args, { tmpDir: tmp.path, cwd: work.path, ...options });

describe('toolhost list', () => {
  it('shows each offered tool with its parameters and description, and exits 0', async () => {
    const result = await run(['list', join(PACKAGES, 'unit-converter'), join(PACKAGES, 'notes')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `unit-converter  ${join(PACKAGES, 'unit-converter')}`,
        '  ✓ convert_length(value, from, to)  [timeout 2000 ms]',
        '      Converts a length from one unit to another. Units: mm, cm, m, km, in, ft, yd, mi.',
        '  ✓ convert_temperature(value, from, to)  [timeout 2000 ms]',
        '      Converts a temperature between Celsius (C), Fahrenheit (F) and Kelvin (K).',
        '',
        `notes  ${join(PACKAGES, 'notes')}`,
        '  ✓ notes_add(text, tags?)  [exclusive]',
        '      Saves a short note (with optional tags) for later in this session.',
        '  ✓ notes_search(query?, tag?)',
        '      Finds saved notes of this session whose text contains `query` and/or that carry `tag`.',
        '',
        '4 tools offered, 0 left out',
        '',
      ].join('\n'),
    );
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('--json lists offered and left-out modules per source, and exits 1 for a module left out', async () => {
    const result = await run(['list', '--json', join(PACKAGES, 'mixed-bag')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout);
    expect(document.ok).toBe(false);
    expect(document.sources).toHaveLength(1);
    const [source] = document.sources;
    expect(source).toMatchObject({
      path: join(PACKAGES, 'mixed-bag'),
      source: join(PACKAGES, 'mixed-bag'),
      kind: 'package',
      packageName: 'mixed-bag',
    });
    expect(source.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'busy_wait',
      'cache_warmer',
      'memory_hog',
      'reverse_text',
      'self_destruct',
      'shout',
      'word_count',
    ]);
    expect(source.tools.find((tool: { name: string }) => tool.name === 'busy_wait')).toEqual({
      name: 'busy_wait',
      description: 'Waits, very actively.',
      parameterSchema: { type: 'object' },
      timeoutMs: 1000,
      concurrency: 'parallel',
    });
    expect(source.leftOut).toEqual([
      {
        module: join(PACKAGES, 'mixed-bag', 'tools', 'fetch-page.js'),
        name: null,
        code: 'DECLARATION_INVALID',
        reason: 'tools/fetch-page.js:2:14: name must match ^[a-zA-Z0-9_-]{1,64}$, got "fetch page"',
      },
    ]);
  });

  it('shows what each package asks for in its manifest, in text and in --json', async () => {
    const networked = join(REPO, 'fixtures/strict/networked');
    const text = await run(['list', networked, join(PACKAGES, 'notes')]);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')).toContain(
      `strict-networked  ${networked}  [asks for the network; gets: none]`,
    );
    expect(text.stdout.split('\n')).toContain(`notes  ${join(PACKAGES, 'notes')}`);

    const json = await run(['list', '--json', networked, join(PACKAGES, 'notes')]);
    const sources = JSON.parse(json.stdout).sources;
    expect(sources.map((source: { permissions: unknown }) => source.permissions)).toEqual([
      { net: true },
      { net: false },
    ]);
    expect(sources.map((source: { network: unknown }) => source.network)).toEqual([false, false]);
  });

  it('shows the hosts a package asks for and what --allow-network grants it of them', async () => {
    const folder = join(work.path, 'weather');
    mkdirSync(folder);
    writeFileSync(
      join(folder, 'package.json'),
      JSON.stringify({
        name: 'weather-tools',
        toolhost: { tools: [], permissions: { net: ['api.weather.gov', '*.example.com:443'] } },
      }),
    );
    const text = await run(['list', '--allow-network', 'weather-tools=a.example.com:443,evil.test', folder]);
    expect(text.stdout.split('\n')[0]).toBe(
      `weather-tools  ${folder}  [asks for the network: api.weather.gov, *.example.com:443; gets: a.example.com:443]`,
    );
    const json = await run(['list', '--json', '--allow-network', 'weather-tools', folder]);
    expect(JSON.parse(json.stdout).sources[0].network).toEqual(['api.weather.gov', '*.example.com:443']);
    const usage = await run(['list', '--allow-network', 'weather-tools=evil host', folder]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'toolhost: expected --allow-network to be PACKAGE or PACKAGE=HOST,HOST..., got "weather-tools=evil host": "evil host" is not a host name (ASCII letters, digits, - and .; *. only first)\n',
    );
  });

  it('says, as serve does, what a tier that does not contain the network does with a grant', async () => {
    const networked = join(REPO, 'fixtures/strict/networked');
    const notGranted = await run(['list', '--isolation', 'worker', networked]);
    expect(notGranted.stdout.split('\n')).toContain(
      `strict-networked  ${networked}  [asks for the network; gets: none]`,
    );
    expect(notGranted.stderr).toBe(
      `toolhost: warning: strict-networked asks for the network ("permissions": { "net": true }) and \`allowNetwork\` does not grant it, but worker isolation on Node ${process.version} does not contain the network: its tools reach any host all the same (the process tier in bubblewrap denies it)\n`,
    );
    const folder = join(work.path, 'held-to-hosts');
    mkdirSync(folder);
    writeFileSync(
      join(folder, 'package.json'),
      JSON.stringify({
        name: 'held-tools',
        toolhost: { tools: [], permissions: { net: ['api.weather.gov'] } },
      }),
    );
    const held = await run(['list', '--isolation', 'worker', '--allow-network', 'held-tools', folder]);
    expect(held.stderr).toBe(
      `toolhost: warning: held-tools is granted network access to api.weather.gov only, and worker isolation on Node ${process.version} does not contain the network: its tools are not held to those hosts (the process tier in bubblewrap is)\n`,
    );
    // A package that asks for nothing hears nothing.
    expect((await run(['list', '--isolation', 'worker', join(PACKAGES, 'notes')])).stderr).toBe('');
  });

  it('shows a left-out module with its reason in text too', async () => {
    const result = await run(['list', join(PACKAGES, 'mixed-bag')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '  ✗ tools/fetch-page.js  left out: DECLARATION_INVALID: tools/fetch-page.js:2:14: name must match ^[a-zA-Z0-9_-]{1,64}$, got "fetch page"\n',
    );
    expect(result.stdout.endsWith('\n7 tools offered, 1 left out\n')).toBe(true);
  });

  it('names a package once in its header: by its name, with the path only when that says more', async () => {
    const result = await runCli(['list', 'notes', './unit-converter/', join(PACKAGES, 'text-stats')], {
      tmpDir: tmp.path,
      cwd: PACKAGES,
    });
    expect(result.code).toBe(0);
    const headers = result.stdout.split('\n').filter((line) => line !== '' && !line.startsWith(' '));
    expect(headers).toEqual([
      'notes',
      'unit-converter',
      `text-stats  ${join(PACKAGES, 'text-stats')}`,
      '5 tools offered, 0 left out',
    ]);

    writePackage(work.path, 'unnamed', {});
    writeFileSync(join(work.path, 'unnamed', 'package.json'), '{"toolhost": {"tools": []}}');
    writeFileSync(join(work.path, 'echo.js'), readFileSync(join(REPO, 'fixtures/modules/echo.js')));
    const unnamed = await run(['list', 'unnamed', 'echo.js']);
    expect(unnamed.stdout.split('\n').filter((line) => line !== '' && !line.startsWith(' '))).toEqual([
      'unnamed',
      'echo.js',
      '1 tool offered, 0 left out',
    ]);
  });

  it('shows a listed module outside the package by its absolute path, not as ../../..', async () => {
    const outside = join(work.path, 'outside.js');
    writeFileSync(outside, readFileSync(join(REPO, 'fixtures/modules/echo.js')));
    const folder = writePackage(work.path, 'reaching', {});
    writeFileSync(
      join(folder, 'package.json'),
      JSON.stringify({ name: 'reaching', type: 'module', toolhost: { tools: ['../outside.js'] } }),
    );
    const result = await run(['list', 'reaching']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`  ✗ ${outside}  left out: MODULE_OUTSIDE_PACKAGE: `);
    expect(result.stdout).not.toContain('../outside.js  left out');
  });
});

describe('toolhost call', () => {
  it('prints the tool’s text on stdout and exits 0', async () => {
    const result = await run([
      'call',
      join(PACKAGES, 'unit-converter'),
      'convert_length',
      '{"value": 5, "from": "km", "to": "mi"}',
    ]);
    expect(result).toMatchObject({ code: 0, stdout: '5 km = 3.10685596119 mi\n', stderr: '' });
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('reads the arguments from stdin for "-"', async () => {
    const result = await run(['call', join(PACKAGES, 'mixed-bag'), 'reverse_text', '-'], {
      input: '{"text": "abc"}',
    });
    expect(result).toMatchObject({ code: 0, stdout: 'cba\n', stderr: '' });
  });

  it('puts details and progress beside the output, on stderr', async () => {
    const result = await run([
      'call',
      join(PACKAGES, 'text-stats'),
      'text_stats',
      '{"text": "One. Two three!", "top": 1}',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('3 words, 2 sentences, 1 line, 15 characters\n');
    expect(result.stderr.split('\n')).toEqual([
      'progress: {"stage":"counting","characters":15}',
      'details: {"characters":15,"words":3,"uniqueWords":3,"lines":1,"sentences":2,"readingTimeSeconds":1,"topWords":[{"word":"one","count":1}]}',
      '',
    ]);
  });

  it('--json gives the whole outcome, details and progress included', async () => {
    const result = await run([
      'call',
      '--json',
      join(PACKAGES, 'text-stats'),
      'text_stats',
      '{"text": "a b a"}',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      tool: 'text_stats',
      ok: true,
      outcome: {
        content: [{ type: 'text', text: '3 words, 1 sentence, 1 line, 5 characters' }],
        isError: false,
        details: {
          characters: 5,
          words: 3,
          uniqueWords: 2,
          lines: 1,
          sentences: 1,
          readingTimeSeconds: 1,
          topWords: [
            { word: 'a', count: 2 },
            { word: 'b', count: 1 },
          ],
        },
      },
      output: [],
      progress: [{ stage: 'counting', characters: 5 }],
    });
  });

  it('returns a PNG image block built in the worker', async () => {
    const result = await run(['call', '--json', join(PACKAGES, 'png-badge'), 'png_badge', '{"percent": 42}']);
    expect(result.code).toBe(0);
    const { outcome } = JSON.parse(result.stdout);
    expect(outcome.content[0]).toEqual({ type: 'text', text: 'an 80×16 PNG badge showing 42%' });
    expect(outcome.content[1].type).toBe('image');
    expect(outcome.content[1].source.media_type).toBe('image/png');
    const png = Buffer.from(outcome.content[1].source.data, 'base64');
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.readUInt32BE(16)).toBe(80);
    expect(png.readUInt32BE(20)).toBe(16);
    expect(outcome.details).toEqual({ width: 80, height: 16, bytes: png.length });

    const text = await run(['call', join(PACKAGES, 'png-badge'), 'png_badge', '{"percent": 42}']);
    expect(text.stdout).toBe(`an 80×16 PNG badge showing 42%\n[image: image/png, ${png.length} bytes]\n`);
  });

  it('a tool that throws: exit 1, one line naming the error code, and where it threw under it', async () => {
    const result = await run([
      'call',
      join(PACKAGES, 'unit-converter'),
      'convert_temperature',
      '{"value": -5, "from": "K", "to": "C"}',
    ]);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: [
        'toolhost: the tool "convert_temperature" failed: TOOL_THREW: -5 °K is below absolute zero',
        // The tool's own frames, relative to its package: where to look.
        '    at convert (tools/convert-temperature.js:16:25)',
        '    at Object.run (tools/convert-temperature.js:35:31)',
        '',
      ].join('\n'),
    });
  });

  it('a tool that calls process.exit: exit 1 with TOOL_EXITED, and the --json outcome says so', async () => {
    const module = join(REPO, 'fixtures/modules/call-exit.js');
    const result = await run(['call', '--json', module, 'call_exit']);
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout);
    expect(document.ok).toBe(false);
    expect(document.outcome.isError).toBe(true);
    expect(document.outcome.error.code).toBe('TOOL_EXITED');
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('--timeout caps the tool’s own timeout', async () => {
    writeFileSync(
      join(work.path, 'hang.js'),
      `export const name = 'hang';
export const description = 'Never answers';
export const parameterSchema = { type: 'object' };
export const timeoutMs = 600000;
export function run(_args, ctx) { void ctx.tmpDir; for (;;) {} }
`,
    );
    const result = await run(['call', '--timeout', '300', 'hang.js', 'hang']);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'toolhost: the tool "hang" failed: TOOL_TIMEOUT: tool timed out after 300 ms\n',
    });
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('what a tool prints goes to stderr, never into its output', async () => {
    writeFileSync(
      join(work.path, 'chatty.js'),
      `export const name = 'chatty';
export const description = 'Prints while it works';
export const parameterSchema = { type: 'object' };
export function run() { console.log('working on it'); return 'done'; }
`,
    );
    const result = await run(['call', 'chatty.js', 'chatty']);
    expect(result).toMatchObject({ code: 0, stdout: 'done\n', stderr: '│ working on it\n' });
    const json = await run(['call', '--json', 'chatty.js', 'chatty']);
    expect(JSON.parse(json.stdout).output).toEqual([{ stream: 'stdout', text: 'working on it\n' }]);
  });
});

describe('the dataDir of toolhost call', () => {
  it('keeps what tools save under --data-dir across calls', async () => {
    const data = join(work.path, 'data');
    const notes = join(PACKAGES, 'notes');
    const added = await run([
      'call',
      notes,
      'notes_add',
      '{"text": "buy milk", "tags": ["shopping"]}',
      '--data-dir',
      data,
    ]);
    expect(added).toMatchObject({ code: 0, stdout: 'saved note #1\n' });
    await run(['call', notes, 'notes_add', '{"text": "call the bank"}', '--data-dir', data]);
    const found = await run(['call', notes, 'notes_search', '{"tag": "shopping"}', '--data-dir', data]);
    expect(found).toMatchObject({ code: 0, stdout: '#1 buy milk [shopping]\n', stderr: '' });
    expect(readdirSync(join(data, 'notes'))).toEqual(['default.jsonl']);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('takes TOOLHOST_DATA_DIR when there is no --data-dir', async () => {
    const data = join(work.path, 'from-env');
    const env = { TOOLHOST_DATA_DIR: data };
    await run(['call', join(PACKAGES, 'notes'), 'notes_add', '{"text": "x"}', '--session', 'abc'], { env });
    expect(readdirSync(join(data, 'notes'))).toEqual(['abc.jsonl']);
  });

  it('defaults to toolhost-data under TMPDIR, the only thing a call leaves there', async () => {
    writeFileSync(
      join(work.path, 'huge.js'),
      `export const name = 'huge';
export const description = 'Returns 100 000 characters';
export const parameterSchema = { type: 'object' };
export function run() { return 'a'.repeat(50000) + 'b'.repeat(50000); }
`,
    );
    const result = await run(['call', 'huge.js', 'huge']);
    expect(result.code).toBe(0);
    const kept = /^the output was cut; all of it is in (.+)$/m.exec(result.stderr)?.[1];
    expect(kept?.startsWith(join(tmp.path, 'toolhost-data', 'outputs'))).toBe(true);
    expect(readFileSync(kept ?? '', 'utf8')).toBe('a'.repeat(50000) + 'b'.repeat(50000));
    expect(result.stdout.length).toBeLessThan(40_000);
    expect(result.stdout.startsWith('aaaa')).toBe(true);
    expect(result.stdout.trimEnd().endsWith('bbbb')).toBe(true);
    expect(readdirSync(tmp.path)).toEqual(['toolhost-data']);
  });
});
