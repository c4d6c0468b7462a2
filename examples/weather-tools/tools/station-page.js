// What both tools share: fetching a weather station's HTML page, and reading it into checked data.
// Not a tool itself (the manifest doesn't list it): a helper the two tool modules import.
import { readFile } from 'node:fs/promises';
import { parse } from 'node-html-parser';
import { z } from 'zod';

/** Where station pages live; tests and mirrors point this at their own server. */
export const baseUrl = process.env.WEATHER_TOOLS_BASE_URL ?? 'https://weather.example.org';

/** A page larger than this is not a station page. */
const MAX_PAGE_BYTES = 1024 * 1024;

/** What a station page must hold, after parsing: anything else is a page we don't understand. */
export const stationSchema = z.object({
  city: z.string().min(1),
  observedAt: z.iso.datetime(),
  temperatureC: z.number().min(-100).max(70),
  conditions: z.string().min(1),
  days: z
    .array(
      z.object({
        date: z.iso.date(),
        lowC: z.number(),
        highC: z.number(),
        conditions: z.string().min(1),
      }),
    )
    .max(14),
});

/** Fetches the station page of `city` (`<baseUrl>/stations/<city>.html`) and reads it. */
export async function fetchStation(city, signal) {
  const url = `${baseUrl}/stations/${encodeURIComponent(city.toLowerCase())}.html`;
  const response = await fetch(url, { signal, headers: { accept: 'text/html' } });
  if (response.status === 404) throw new Error(`no weather station page for ${city} (${url})`);
  if (!response.ok) throw new Error(`the weather service answered ${response.status} for ${url}`);
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_PAGE_BYTES)
    throw new Error(`the page for ${city} is ${declared} bytes, more than a station page`);
  const html = await response.text();
  if (html.length > MAX_PAGE_BYTES) throw new Error(`the page for ${city} is more than a station page`);
  return parseStation(html);
}

/** Reads a station page's HTML into {@link stationSchema}'s shape; throws naming what is missing. */
export function parseStation(html) {
  const root = parse(html);
  const station = root.querySelector('article.station');
  if (station === null) throw new Error('not a station page: no <article class="station">');
  const page = {
    city: station.getAttribute('data-city'),
    observedAt: station.getAttribute('data-observed'),
    temperatureC: Number.parseFloat(station.querySelector('.now .temperature')?.text ?? ''),
    conditions: station.querySelector('.now .conditions')?.text.trim(),
    days: station.querySelectorAll('table.forecast tr[data-date]').map((row) => ({
      date: row.getAttribute('data-date'),
      lowC: Number.parseFloat(row.querySelector('.low')?.text ?? ''),
      highC: Number.parseFloat(row.querySelector('.high')?.text ?? ''),
      conditions: row.querySelector('.conditions')?.text.trim(),
    })),
  };
  const checked = stationSchema.safeParse(page);
  if (!checked.success)
    throw new Error(`not a station page: ${z.prettifyError(checked.error).replaceAll('\n', ' ')}`);
  return checked.data;
}

/** The sample page shipped with the package, for selftests (which need no network). */
export function readSamplePage() {
  return readFile(new URL('../sample/station.html', import.meta.url), 'utf8');
}
