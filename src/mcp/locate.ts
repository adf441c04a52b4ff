// Finds a server's program on PATH and the folders it must read to start: the program's own
// installation and, for `node script.js`-style servers, the package (or node_modules tree) of the
// script. The sandbox grants these and nothing else unless the server's table says so.
import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { LocatedServer } from './plan.ts';

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The absolute path of `command` as execvp would find it, or undefined. */
export function resolveProgram(
  command: string,
  pathVariable: string | undefined,
  cwd: string,
): string | undefined {
  if (command.includes('/')) {
    const path = resolve(cwd, command);
    return isExecutableFile(path) ? path : undefined;
  }
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(isAbsolute(dir) ? dir : resolve(cwd, dir), command);
    if (isExecutableFile(path)) return path;
  }
  return undefined;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The outermost node_modules folder above `file`, or the nearest folder with a package.json, or its folder. */
export function packageFolder(file: string): string {
  const real = realpathOr(file);
  const parts = real.split(sep);
  const first = parts.indexOf('node_modules');
  if (first > 0) return parts.slice(0, first + 1).join(sep);
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    if (isFile(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(real);
  }
}

/** The `name` in the nearest package.json above `file`. */
export function packageName(file: string): string | undefined {
  for (let dir = dirname(realpathOr(file)); ; dir = dirname(dir)) {
    try {
      const name = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
      if (typeof name === 'string' && name) return name;
    } catch {
      // No package.json here, or not JSON: keep looking upwards.
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The program's installation folder: the parent of a `bin` folder (e.g. a Node install), else its folder. */
function programFolder(program: string): string {
  const dir = dirname(realpathOr(program));
  if (dir.split(sep).includes('node_modules')) return packageFolder(program);
  return basename(dir) === 'bin' ? dirname(dir) : dir;
}

export function locateServer(
  command: string,
  args: readonly string[],
  pathVariable: string | undefined,
  cwd: string,
): LocatedServer {
  const program = resolveProgram(command, pathVariable, cwd);
  if (!program) return { program: undefined, ownPaths: [] };
  const ownPaths = [programFolder(program)];
  // The script an interpreter runs is the first argument that is a file; directories and other
  // arguments are data the table must grant explicitly.
  const script = args.find((arg) => !arg.startsWith('-'));
  if (script !== undefined) {
    const path = resolve(cwd, script);
    if (isFile(path)) ownPaths.push(packageFolder(path));
  }
  return { program, ownPaths: [...new Set(ownPaths)] };
}
