// The next days' forecast for a city, read from its station's page.
// Each date-fns function from its own path (see weather.js).
import { format } from 'date-fns/format';
import { parseISO } from 'date-fns/parseISO';
import { z } from 'zod';
import { fetchStation, parseStation, readSamplePage } from './station-page.js';

export const name = 'forecast';
export const description = 'The forecast for the next days in a city: each day with its low and high in °C';
export const parameterSchema = z.object({
  city: z.string().min(1).max(80).describe('the city, e.g. "Oslo"'),
  days: z.number().int().min(1).max(7).default(3).describe('how many days, 1 to 7'),
});
export const timeoutMs = 10_000;
export const annotations = { readOnlyHint: true, openWorldHint: true };

/** One line per day, at most `days` of them. */
export function describeDays(station, days) {
  const lines = station.days
    .slice(0, days)
    .map(
      (day) =>
        `${format(parseISO(day.date), 'EEEE d MMMM')}: ${day.lowC} to ${day.highC} °C, ${day.conditions}`,
    );
  return [`${station.city}, the next ${lines.length} days:`, ...lines].join('\n');
}

export async function run(args, ctx) {
  // zod fills in the default `days` the JSON Schema only describes.
  const { city, days } = parameterSchema.parse(args);
  return describeDays(await fetchStation(city, ctx.signal), days);
}

export async function selftest() {
  const said = describeDays(parseStation(await readSamplePage()), 2);
  const expected = [
    'Oslo, the next 2 days:',
    'Monday 7 December: -6 to -1 °C, snow showers',
    'Tuesday 8 December: -8 to -4 °C, clear & cold',
  ].join('\n');
  if (said !== expected) throw new Error(`expected ${JSON.stringify(expected)}, got ${JSON.stringify(said)}`);
}
