/**
 * The known word a mistyped one most likely meant (`lsit` → `list`), by the optimal string alignment
 * distance: edits of one character each (insert, delete, replace, swap two neighbours).
 */

/** The edits between `typed` and `known`, each character counted once. */
function editDistance(typed: string, known: string): number {
  // rows[i][j]: the distance between typed's first i characters and known's first j.
  const rows: number[][] = [];
  for (let i = 0; i <= typed.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= known.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1] as number[];
      const replaced = (above[j - 1] as number) + (typed[i - 1] === known[j - 1] ? 0 : 1);
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, replaced);
      if (i > 1 && j > 1 && typed[i - 1] === known[j - 2] && typed[i - 2] === known[j - 1]) {
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return (rows[typed.length] as number[])[known.length] as number;
}

/**
 * The word of `known` closest to `typed`, or `undefined` when none is close: at most two edits, and
 * fewer edits than the typed word has characters (so `x` suggests nothing). Ties go to the first.
 */
export function closestWord(typed: string, known: readonly string[]): string | undefined {
  const longest = 64;
  if (typed.length > longest) return undefined;
  let closest: string | undefined;
  let closestDistance = Math.min(2, typed.length - 1);
  for (const word of known) {
    const distance = editDistance(typed.toLowerCase(), word);
    if (distance <= closestDistance && (closest === undefined || distance < closestDistance)) {
      closest = word;
      closestDistance = distance;
    }
  }
  return closest;
}
