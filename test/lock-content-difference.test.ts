/**
 * A change of a package's content under a lock, as a reviewer reads it: the files added, removed and
 * changed by path (from the lock's per-file digests), at most a screenful of them, and on screen no
 * digest cut in half.
 */
import { describe, expect, it } from 'vitest';
import { differenceLines } from '../dist/src/cli/ui/difference.js';
import { changedFiles, contentDifference } from '../dist/src/lock/difference.js';

const digest = (seed: string) => `sha256:${seed.repeat(64).slice(0, 64)}`;

describe('the difference of a changed content', () => {
  const before = {
    content: digest('a'),
    files: { 'kept.js': digest('1'), 'gone.js': digest('2'), 'edited.js': digest('3') },
  };
  const after = {
    content: digest('b'),
    files: { 'kept.js': digest('1'), 'new file.js': digest('4'), 'edited.js': digest('5') },
  };

  it('lists the content, then each file added, removed or changed, by path', () => {
    expect(changedFiles(before, after)).toEqual(['edited.js', 'gone.js', 'new file.js']);
    expect(contentDifference(before, after)).toEqual([
      { field: 'content', before: digest('a'), after: digest('b') },
      { field: 'files["edited.js"]', before: digest('3'), after: digest('5') },
      { field: 'files["gone.js"]', before: digest('2') },
      { field: 'files["new file.js"]', after: digest('4') },
    ]);
  });

  it('on screen, says changed, added or removed instead of cutting a digest', () => {
    expect(differenceLines(contentDifference(before, after), '  ')).toEqual([
      '  content: changed',
      '  files["edited.js"]: changed',
      '  files["gone.js"]: removed',
      '  files["new file.js"]: added',
    ]);
    expect(differenceLines([{ field: 'description', before: 'old', after: 'new' }], '')).toEqual([
      'description: "old" → "new"',
    ]);
  });

  it('names no file when a side has no per-file digests (a lock written before them)', () => {
    expect(changedFiles({ content: digest('a') }, after)).toBeUndefined();
    expect(contentDifference({ content: digest('a') }, after)).toEqual([
      { field: 'content', before: digest('a'), after: digest('b') },
    ]);
  });

  it('stops after 20 files, saying there are more', () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`f${index}.js`, digest('c')]));
    const found = contentDifference(
      { content: digest('a'), files: {} },
      { content: digest('b'), files: many },
    );
    expect(found).toHaveLength(22);
    expect(found.at(-1)).toEqual({ field: '(more changed files)' });
  });
});
