/**
 * The Node.js release and what each tier needs of it (src/calls/isolation.ts knows the versions):
 * a permission model that covers WASI (20.16) for strict and for the process tier without a
 * sandbox; one that denies the network (25); and a strict worker that can give back its read of the
 * host's working directory (24.20, 26.3).
 */
import { PERMISSION_MODEL_USABLE, STRICT_DENIES_NETWORK, strictTierGaps } from '../../calls/isolation.js';
import type { DoctorCheck } from './check.js';

export function nodeChecks(): DoctorCheck[] {
  const node = `Node.js ${process.version}`;
  const readsWorkingDirectory = strictTierGaps().some((gap) => gap.includes('working directory'));
  return [
    PERMISSION_MODEL_USABLE
      ? {
          id: 'node-permission-model',
          status: 'ok',
          found: `${node}'s permission model covers WASI: strict runs, and so does the process tier without a sandbox, confined`,
          tiers: ['strict', 'process'],
        }
      : {
          id: 'node-permission-model',
          status: 'missing',
          found: `${node}'s permission model does not cover WASI (20.16 and later do): strict can't run, and the process tier without a sandbox is not confined`,
          fix: 'install Node.js 20.16 or later (an LTS line: 22 or 24)',
          tiers: ['strict', 'process'],
        },
    STRICT_DENIES_NETWORK
      ? {
          id: 'node-network',
          status: 'ok',
          found: `${node}'s permission model denies the network unless granted`,
          tiers: ['strict', 'process'],
        }
      : {
          id: 'node-network',
          status: 'note',
          found: `${node}'s permission model does not deny the network (Node.js 25 and later do): strict, and the process tier without a sandbox, don't contain it`,
          fix: 'the process tier in bubblewrap holds the network on every Node.js line; for strict, install Node.js 25 or later',
          tiers: ['strict', 'process'],
        },
    readsWorkingDirectory
      ? {
          id: 'node-working-directory',
          status: 'note',
          found: `${node} lets strict workers read the host's working directory`,
          fix: 'install Node.js 24.20 or later on the 24 line, or 26.3 or later',
          tiers: ['strict'],
        }
      : {
          id: 'node-working-directory',
          status: 'ok',
          found: `${node} keeps strict workers out of the host's working directory`,
          tiers: ['strict'],
        },
  ];
}
