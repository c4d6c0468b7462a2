// The weather now in a city, read from its station's page.
// Each date-fns function from its own path: the package's index loads some 250 modules, which took
// 4 to 5 s on Node 26.12 on a loaded machine, close to the declaration read's 5 s bound.
import { formatDistanceStrict } from 'date-fns/formatDistanceStrict';
import { z } from 'zod';
import { fetchStation, parseStation, readSamplePage } from './station-page.js';

export const name = 'weather';
export const description =
  'The weather now in a city: temperature in °C, conditions, and how long ago it was observed';
// A zod schema: toolhost converts it to JSON Schema in its throwaway reader, and its Ajv checks the
// model's input before run() sees it.
export const parameterSchema = z.object({
  city: z.string().min(1).max(80).describe('the city, e.g. "Oslo"'),
});
export const timeoutMs = 10_000;
export const annotations = { readOnlyHint: true, openWorldHint: true };

/** The sentence the model reads, given the page and the time it is now. */
export function describeNow(station, now) {
  const age = formatDistanceStrict(new Date(station.observedAt), now, { addSuffix: true });
  return `${station.city}: ${station.temperatureC} °C, ${station.conditions} (observed ${age})`;
}

export async function run(args, ctx) {
  const { city } = parameterSchema.parse(args);
  return describeNow(await fetchStation(city, ctx.signal), new Date());
}

export async function selftest() {
  const station = parseStation(await readSamplePage());
  const said = describeNow(station, new Date('2026-12-06T21:00:00Z'));
  const expected = 'Oslo: -3.5 °C, light snow (observed 10 minutes ago)';
  if (said !== expected) throw new Error(`expected ${JSON.stringify(expected)}, got ${JSON.stringify(said)}`);
  let refused = '';
  try {
    parseStation('<html><body><p>Moved permanently</p></body></html>');
  } catch (error) {
    refused = error.message;
  }
  if (!refused.startsWith('not a station page'))
    throw new Error(`a page without a station was read: ${refused}`);
}
