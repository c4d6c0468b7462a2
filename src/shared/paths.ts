/** Paths as toolhost compares them: absolute and normalized, as `path.resolve` gives them. */
import { sep } from 'node:path';

/** Whether `path` is `folder` itself or anything below it. */
export function isWithin(folder: string, path: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}
