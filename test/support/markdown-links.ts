/**
 * Reads Markdown the way GitHub renders it, as far as links need: the headings a page has (and the
 * anchors GitHub gives them), and the relative links it makes. Used by the docs' link test.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** One link a page makes to something in the repository: its target as written and where. */
export interface RelativeLink {
  /** The page the link is on, relative to the folder the check started from. */
  page: string;
  /** 1-based line of the link. */
  line: number;
  /** The target as written: `docs/cli.md#options`, `#images`, `../LICENSE`. */
  target: string;
}

/** The lines of a page outside fenced code blocks (a line in a fence is blank here). */
function linesOutsideFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (opening !== null) {
      const marker = opening[1] ?? '';
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** A heading's text as GitHub renders it for its anchor: links become their text, tags go. */
function renderedHeadingText(source: string): string {
  return source
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+#+\s*$/, '')
    .trim();
}

/**
 * GitHub's anchor for a heading's text (github-slugger): lowercase, every character that is not a
 * letter, a mark, a digit, `_`, `-` or a space removed, each space a `-`.
 */
export function githubSlug(headingText: string): string {
  return renderedHeadingText(headingText)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page, in order; a repeated slug gets `-1`, `-2`, … as GitHub numbers them. */
export function headingAnchors(text: string): string[] {
  const counts = new Map<string, number>();
  const anchors: string[] = [];
  for (const line of linesOutsideFences(text)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*)$/.exec(line);
    if (heading === null) continue;
    const slug = githubSlug(heading[1] ?? '');
    const seen = counts.get(slug);
    counts.set(slug, (seen ?? -1) + 1);
    anchors.push(seen === undefined ? slug : `${slug}-${seen + 1}`);
  }
  return anchors;
}

/** The relative links of a page (inline links, images and reference definitions), outside code. */
export function relativeLinks(text: string, page: string): RelativeLink[] {
  const links: RelativeLink[] = [];
  linesOutsideFences(text).forEach((line, index) => {
    const prose = line.replace(/(`+)[^`]*?\1/g, '');
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? ''),
      ...[...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((match) => match[1] ?? ''),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ page, line: index + 1, target });
    }
  });
  return links;
}

/**
 * What is wrong with each relative link of the given pages (paths relative to `root`): a target
 * that is no file or folder, or an anchor that is no heading of the page it names. Empty when all
 * resolve.
 */
export function brokenLinks(root: string, pages: readonly string[]): string[] {
  const anchorsOf = new Map<string, string[]>();
  const anchors = (file: string) => {
    let found = anchorsOf.get(file);
    if (found === undefined) {
      found = headingAnchors(readFileSync(file, 'utf8'));
      anchorsOf.set(file, found);
    }
    return found;
  };
  const problems: string[] = [];
  for (const page of pages) {
    const pageFile = join(root, page);
    for (const link of relativeLinks(readFileSync(pageFile, 'utf8'), page)) {
      const hash = link.target.indexOf('#');
      const path = hash === -1 ? link.target : link.target.slice(0, hash);
      const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
      const file = path === '' ? pageFile : join(dirname(pageFile), decodeURIComponent(path));
      const where = `${link.page}:${link.line}: ${link.target}`;
      if (!existsSync(file)) {
        problems.push(`${where}: ${relative(root, file)} does not exist`);
      } else if (anchor !== undefined && !(statSync(file).isFile() && anchors(file).includes(anchor))) {
        problems.push(`${where}: ${relative(root, file)} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}
