/**
 * `toolhost list` and `toolhost call` with the richer declarations and results: a title, the claims
 * annotations make (as claims), the output schema's properties; audio, resources and links each on
 * a line of their own; a structured result beside its text; a hostile image as exit 1 with its code.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDir, runCli } from './support/cli-run.js';
import { generatedModule } from './support/generated-modules.js';

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));

describe('toolhost list and call with richer tools', () => {
  let tmp: ReturnType<typeof freshDir>;
  beforeEach(() => {
    tmp = freshDir('toolhost-cli-rich');
  });
  afterEach(() => tmp.remove());
  const run = (args: string[]) => runCli(args, { tmpDir: tmp.path, env: { NO_COLOR: '1' } });

  it('list shows the title, the claimed behaviour and the structured output', async () => {
    const result = await run(['list', fixture('declarations/rich-valid.js')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '  ✓ rich_valid(give) → {celsius, city}  "City temperature"  [claims read-only, not destructive, idempotent, closed world]\n      The temperature in a city\n',
    );
  });

  it('list --json has the new fields of the declaration', async () => {
    const result = await run(['list', '--json', fixture('declarations/rich-valid.js')]);
    const [tool] = JSON.parse(result.stdout).sources[0].tools;
    expect(tool).toMatchObject({
      title: 'City temperature',
      annotations: { readOnlyHint: true },
      outputSchema: { type: 'object', required: ['celsius', 'city'] },
    });
  });

  it('list shows a misnamed schema as left out with the did-you-mean reason', async () => {
    const result = await run(['list', generatedModule('input-schema-camel.js')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'DECLARATION_INVALID: input-schema-camel.js:4:14: parameterSchema is missing and the module declares `inputSchema`: did you mean `parameterSchema`?',
    );
  });

  it('call shows each block that is not text as one line saying what it is', async () => {
    const result = await run(['call', fixture('media/good-media.js'), 'good_media', '{}']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'media follows',
        '[image: image/png, 70 bytes]',
        '[audio: audio/wav, 52 bytes]',
        '[resource: file:///reports/q3.md (text/markdown), 15 characters]',
        '[resource: file:///reports/q3.bin (application/octet-stream), 4 bytes]',
        '[resource link: q3.pdf <https://example.com/q3.pdf> (application/pdf)]',
        '',
      ].join('\n'),
    );
  });

  it('call shows a structured result as its text, with the structured content on stderr', async () => {
    const result = await run([
      'call',
      fixture('declarations/rich-valid.js'),
      'rich_valid',
      '{"give":"structured"}',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Oslo: 21.5 °C\n');
    expect(result.stderr).toContain('structured content: {"celsius":21.5,"city":"Oslo"}');
  });

  it('call of a tool whose image is hostile exits 1 with TOOL_BAD_RESULT and the reason', async () => {
    const result = await run([
      'call',
      fixture('media/hostile-image.js'),
      'hostile_image',
      '{"case":"not base64"}',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("TOOL_BAD_RESULT: an image's data is not base64");
  });
});
