/**
 * How the command shows where a module and a package are: a module by its path inside its package,
 * and one outside it (a listed `../../../etc/passwd`) by its absolute path, so it reads as what it is.
 */
import { isAbsolute, normalize, relative, sep } from 'node:path';

/** `tools/weather.js` for a module inside `root`; the absolute path for one outside it (or `root` itself). */
export function pathInPackage(root: string, path: string): string {
  const inside = relative(root, path);
  const outside = inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside);
  return outside ? path : inside;
}

/** Whether `typed` (a path as the user typed it) says no more than `name`: `notes`, `./notes/`. */
export function pathIsJustName(typed: string, name: string): boolean {
  return normalize(typed).replace(/[\\/]+$/, '') === name;
}
