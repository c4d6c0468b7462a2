/** Section 10 of the report: loading with and without a lock. */
import { formatMs, formatRatio } from './stats.mjs';

export function lockLoadSection(result) {
  const { stats, cpu, moduleCount, rounds, leftOut, check } = result;
  const rows = [
    ['without a lock', stats.noLock, cpu.noLock],
    ['with a lock pinning every module', stats.lock, cpu.lock],
  ].map(
    ([label, wall, time]) =>
      `| ${label} | ${formatMs(wall.median)} | ${formatMs(wall.min)} – ${formatMs(wall.max)} | ${formatRatio(wall.median / stats.noLock.median)} | ${formatMs(time.median)} | ${formatRatio(time.median / cpu.noLock.median)} |`,
  );
  return [
    `## 10. Loading under a lock (${moduleCount} modules, ${rounds} rounds, alternating)`,
    '',
    '| Variant | Load (median) | Range | vs no lock | CPU (median) | CPU vs no lock |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    leftOut.length === 0
      ? 'Every module was offered in every load.'
      : `Left out: ${leftOut.length} (see latest.json).`,
    '',
    `The check alone (the lock read and parsed, ${moduleCount} declarations digested and compared): median ${formatMs(check.median)}, max ${formatMs(check.max)} (${check.n} runs): ${((100 * check.median) / stats.noLock.median).toFixed(2)} % of a load without a lock.`,
    '',
  ].join('\n');
}
