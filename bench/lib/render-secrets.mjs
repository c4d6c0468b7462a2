/** The secrets scenario's target and its section of the report. */
import { table } from './markdown.mjs';
import { formatMs, formatRatio } from './stats.mjs';

export function secretsTargets(result) {
  if (result === undefined || result.skipped !== undefined) return [];
  const { keptAlive, keptAliveRatio } = result;
  return [
    {
      id: 'secrets-kept-alive',
      target:
        'a kept-alive HTTPS request with its secret swapped in at the proxy ≤ 1.3 × the same request tunnelled (timed in the tool)',
      ratio: keptAliveRatio,
      measured: `${formatRatio(keptAliveRatio)} (${formatMs(keptAlive.swapped.median)} vs ${formatMs(keptAlive.tunnelled.median)})`,
      met: keptAliveRatio <= 1.3,
    },
  ];
}

export function secretsSection(result) {
  if (result.skipped !== undefined) return `## 18. Secrets\n\nSkipped: ${result.skipped}.`;
  const row = (label, samples) => [
    label,
    `${formatMs(samples.swapped.median)} (p99 ${formatMs(samples.swapped.p99)})`,
    `${formatMs(samples.tunnelled.median)} (p99 ${formatMs(samples.tunnelled.p99)})`,
    formatRatio(samples.swapped.median / samples.tunnelled.median),
  ];
  const { certificates, first } = result;
  return [
    '## 18. Secrets: a request with its secret swapped in, against the same request tunnelled',
    '',
    `A 1 KiB HTTPS resource, \`authorization: Bearer $TOKEN\`. Swapped: the package binds the secret to the host, so its proxy terminates TLS, swaps the placeholder for the value and searches the answer for the value; tunnelled: a package that binds none, its TLS spliced end to end. ${result.cycles} calls of ${result.perCall} requests each (per request, timed in the tool), ${result.callCycles} host.calls of one request, ${result.freshCycles} requests on new connections; interleaved.`,
    '',
    table(
      ['', 'swapped', 'tunnelled', 'swapped vs tunnelled'],
      [
        row('kept-alive request (in the tool)', result.keptAlive),
        ...(result.hostCpu === undefined
          ? []
          : [row("the host process's CPU time per kept-alive request", result.hostCpu)]),
        row('host.call of one kept-alive request', result.call),
        row('request on a new connection (in the tool)', result.fresh),
      ],
    ),
    '',
    `The first request to a bound host: ${formatMs(first.swapped)} against ${formatMs(first.tunnelled)} tunnelled (a package's first call, both with their process and proxy started). Where it goes: the CA and the first host's key and certificate, made in a thread of their own once per host process, ${formatMs(certificates.authorityAndFirstHost)}; each further host name ${formatMs(certificates.anotherHost)} (most of it the thread's start); cached ${formatMs(certificates.cached)}. Then per connection a TLS handshake with the proxy, and the first time one from the proxy to the real server (the row "new connection").`,
  ].join('\n');
}

export function secretsProxySection(result) {
  const { keptAlive, proxyBusy } = result;
  const row = (label, samples) => [
    label,
    formatMs(samples.swapped.median),
    formatMs(samples.tunnelled.median),
    formatRatio(samples.swapped.median / samples.tunnelled.median),
  ];
  return [
    '## 18b. Secrets: the proxy alone',
    '',
    `The same kept-alive 1 KiB HTTPS request through an egress proxy that swaps a secret in against one that tunnels it, with no sandbox and no host.call around them: the proxies in the scenario's thread, the client (Node's https through the agents a package's process gets) and the server each in a thread of their own. ${result.cycles} runs of ${result.perRun} requests per variant, interleaved. The proxy's work per request is its thread's ${result.proxyBusyIs}. \`node bench/scenarios/secrets-proxy.mjs --profile\` prints where that time goes.`,
    '',
    table(
      ['per request', 'swapped', 'tunnelled', 'swapped vs tunnelled'],
      [row('kept-alive request (in the client)', keptAlive), row("the proxy's work", proxyBusy)],
    ),
  ].join('\n');
}
