/** `toolhost doctor` as text: the tiers, then each check with its fix, then the verdict. */
import type { CheckStatus } from '../doctor/check.js';
import type { DoctorReport } from '../doctor/report.js';
import type { OutputStream } from './terminal.js';

const STATUS_WORD: Record<CheckStatus, string> = {
  ok: 'ok',
  missing: 'missing',
  note: 'note',
  'not-applicable': 'n/a',
};

export function writeDoctorReport(stdout: OutputStream, report: DoctorReport): void {
  const lines = [`Node.js ${report.node} on ${report.platform}`, '', 'Tiers'];
  const tierWidth = Math.max(...report.tiers.map((tier) => label(tier).length)) + 2;
  for (const tier of report.tiers) {
    lines.push(`  ${label(tier).padEnd(tierWidth)}${tier.runs ? tier.holds : 'does not run here'}`);
    for (const lack of tier.lacks) lines.push(`  ${''.padEnd(tierWidth)}without ${lack}`);
  }
  lines.push('', 'Checks');
  const idWidth = Math.max(...report.checks.map((check) => check.id.length)) + 2;
  for (const check of report.checks) {
    lines.push(`  ${STATUS_WORD[check.status].padEnd(9)}${check.id.padEnd(idWidth)}${check.found}`);
    if (check.fix === undefined) continue;
    const [first, ...rest] = check.fix.split('\n');
    const indent = ''.padEnd(9 + idWidth);
    lines.push(`  ${indent}fix: ${first}`);
    for (const line of rest) lines.push(`  ${indent}     ${line}`);
  }
  lines.push(
    '',
    report.ok
      ? `The default tier, ${report.defaultTier.tier}, runs at full strength here.`
      : `The default tier, ${report.defaultTier.tier}, runs here without ${process.platform === 'linux' ? 'its bubblewrap sandbox' : "Node's permission model"}: see what is missing above.`,
  );
  stdout.write(`${lines.join('\n')}\n`);
}

function label(tier: DoctorReport['tiers'][number]): string {
  return tier.default ? `${tier.tier} (default)` : tier.tier;
}
