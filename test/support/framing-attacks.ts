/**
 * What the secrets proxy's attack tests (test/secrets-proxy-attack-*.test.ts) check after each
 * attack, on the framing rig: that the proxy still serves a plain request.
 */
import { expect } from 'vitest';
import { bodyOf, type FramingRig, ok } from './framing-rig.js';
import { exchange } from './secrets-proxy.js';

/** A new tunnel through `rig`'s proxy gets its request answered whole: the proxy lives after an attack. */
export async function expectStillServes(rig: FramingRig): Promise<void> {
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  expect(bodyOf(await exchange(socket, `GET /alive HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe(
    '2\r\nok\r\n0\r\n\r\n',
  );
  socket.destroy();
}
