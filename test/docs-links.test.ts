/**
 * The manual holds together: every relative link between README.md and docs/*.md names a file
 * that exists and, with an anchor, a heading of that file (as GitHub makes anchors); every docs page
 * is on the README's map; and the README stays short (issue 48: under ~300 lines).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { brokenLinks, githubSlug, headingAnchors, relativeLinks } from './support/markdown-links.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DOCS_PAGES = readdirSync(join(REPO, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);

describe('the manual', () => {
  it('has docs pages, and every relative link of README.md and docs/*.md resolves', () => {
    expect(DOCS_PAGES.length).toBeGreaterThan(10);
    expect(brokenLinks(REPO, ['README.md', ...DOCS_PAGES])).toEqual([]);
  });

  it('links to other pages and anchors at all (the check has something to check)', () => {
    const links = ['README.md', ...DOCS_PAGES].flatMap((page) =>
      relativeLinks(readFileSync(join(REPO, page), 'utf8'), page),
    );
    expect(links.filter((link) => link.target.includes('#')).length).toBeGreaterThan(20);
  });

  it('puts every docs page on the README’s map', () => {
    const readme = relativeLinks(readFileSync(join(REPO, 'README.md'), 'utf8'), 'README.md');
    const linked = new Set(readme.map((link) => link.target.split('#')[0]));
    expect(DOCS_PAGES.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('keeps README.md under 320 lines, with the headings CI and the lead rely on', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(320);
    expect(headingAnchors(readme)).toEqual(expect.arrayContaining(['tested-node-versions', 'install']));
    expect(readme).toContain('npm test');
  });
});

describe('the link check', () => {
  let folder: string | undefined;
  afterEach(() => {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    folder = undefined;
  });

  it('makes anchors as GitHub does', () => {
    expect(githubSlug('Serving tools over MCP: `toolhost serve`')).toBe(
      'serving-tools-over-mcp-toolhost-serve',
    );
    expect(githubSlug("The host's file descriptors")).toBe('the-hosts-file-descriptors');
    expect(githubSlug('`run(args, ctx)`')).toBe('runargs-ctx');
    expect(githubSlug('Structured results and `outputSchema`')).toBe('structured-results-and-outputschema');
    expect(githubSlug('HTTP, and several instances behind a load balancer')).toBe(
      'http-and-several-instances-behind-a-load-balancer',
    );
    expect(headingAnchors('# A\n## A\n```\n# A\n```\n### A\n')).toEqual(['a', 'a-1', 'a-2']);
  });

  it('names a missing file, a missing anchor and a heading inside a code block, and passes a good link', () => {
    folder = mkdtempSync(join(tmpdir(), 'toolhost-docs-links-'));
    writeFileSync(join(folder, 'other.md'), '# Other\n\n## Real part\n\n```\n## Fenced part\n```\n');
    writeFileSync(
      join(folder, 'page.md'),
      [
        '# Page',
        'See [real](other.md#real-part), [top](#page), [site](https://example.com/x.md#nope),',
        '`[in code](gone.md)`, [gone](gone.md), [no part](other.md#no-part) and [fenced](other.md#fenced-part).',
        '```',
        '[in a fence](gone-too.md)',
        '```',
      ].join('\n'),
    );
    expect(brokenLinks(folder, ['page.md'])).toEqual([
      'page.md:3: gone.md: gone.md does not exist',
      'page.md:3: other.md#no-part: other.md has no heading #no-part',
      'page.md:3: other.md#fenced-part: other.md has no heading #fenced-part',
    ]);
  });
});
