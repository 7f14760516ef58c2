/**
 * The PATH every tool the service spawns is looked up on (git, hg, svn, openssl). Deployed, it is
 * the process's own, and the process decides what is there: the worker image and the Git front
 * end have the tools; a zip function's Node.js runtime has none of them. Locally every function
 * shares one process on a machine that has them all, so the local stand-ins run each zip
 * function's invocation inside `runWithToolPath` with a PATH that holds only `node` (as the
 * runtime's does): a zip handler that spawns git then fails locally, with ENOENT, exactly where it
 * would fail deployed. The scope follows the invocation's async context, nothing else.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scoped = new AsyncLocalStorage<string>();

export const toolPath = (): string => scoped.getStore() ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';

/** Runs `work` with tools looked up on `path` (the local stand-ins' view of a runtime). */
export const runWithToolPath = <T>(path: string, work: () => T): T => scoped.run(path, work);
