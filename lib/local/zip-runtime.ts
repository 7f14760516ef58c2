/**
 * A zip function's Node.js runtime as the local stand-ins reproduce it: its PATH has `node` and
 * none of the tools the service spawns (no git, hg, svn or openssl). Each zip function's invocation
 * runs inside `asZipFunction`; what AWS runs in the worker image (`asImageFunction`) or the Git
 * front end gets the machine's PATH, as the image has them.
 */
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWithToolPath } from '#shared/tool-path';

let runtimePath: Promise<string> | undefined;
/** The directory once made: every later invocation starts at once, without awaiting it again. */
let madeRuntimePath: string | undefined;

/** A directory holding only `node` (a link to this process's), made once per process. */
function zipRuntimePath(): Promise<string> {
  runtimePath ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lambda-nodejs-runtime-'));
    await symlink(process.execPath, join(dir, 'node'));
    madeRuntimePath = dir;
    return dir;
  })();
  return runtimePath;
}

export const asZipFunction = <T>(invocation: () => Promise<T>): Promise<T> =>
  madeRuntimePath !== undefined
    ? runWithToolPath(madeRuntimePath, invocation)
    : zipRuntimePath().then((path) => runWithToolPath(path, invocation));

export const asImageFunction = <T>(invocation: () => Promise<T>): Promise<T> =>
  runWithToolPath(process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', invocation);
