import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES, servedBy } from '#shared/routes';
import { ROOT, runtimeClosure } from '#test/source-imports';

/*
 * API Gateway's routes are zip functions on Lambda's Node.js runtime, which has no git, hg or svn:
 * a handler that spawns one works locally (the machine has them) and fails in AWS. So no module a
 * route's function loads may start a process at all; git runs in the worker image's functions and
 * in the Git front end (`servedBy: 'git-frontend'`), which have it.
 */

/** What starts processes: Node's API, and `http-backend.ts`, the module most likely to creep back. */
const SPAWNS = new Set(['node:child_process', 'child_process', join(ROOT, 'functions/vcs/http-backend.ts')]);

/** The modules of `entry`'s run-time closure that start processes. */
const spawnersIn = (entry: string): string[] =>
  [...runtimeClosure(join(ROOT, entry))]
    .filter((module) => SPAWNS.has(module))
    .map((module) => (module.startsWith(ROOT) ? relative(ROOT, module) : module));

const apiRoutes = ROUTES.filter((route) => servedBy(route) === 'api');

describe("API Gateway's route functions (zip, Node.js runtime)", () => {
  it('are checked through aliases and relative imports, down to child_process', () => {
    expect(apiRoutes.length).toBeGreaterThan(50);
    expect(spawnersIn('functions/workflow/push.ts')).toContain('node:child_process');
    expect(spawnersIn('functions/services/hosted-git.ts')).toEqual(
      expect.arrayContaining(['functions/vcs/http-backend.ts', 'node:child_process']),
    );
  });

  it.each(apiRoutes.map((route) => [`${route.method} ${route.path}`, route.handler] as const))(
    '%s starts no process: git, hg and svn are not on its runtime',
    (_, handler) => {
      expect(spawnersIn(`functions/http/${handler}.ts`)).toEqual([]);
    },
  );
});
