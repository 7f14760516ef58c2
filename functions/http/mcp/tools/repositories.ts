import * as z from 'zod/mini';
import { callerHasScope } from '#services/authenticate';
import { createForOwner } from '#services/repositories';
import { repositoryOverview } from '#services/repository-overview';
import { notFound } from '#shared/errors';
import { importJson } from '../../json/import.ts';
import { repositoryJson } from '../../json/repository.ts';
import { body as createBody } from '../../repos/create-for-user.ts';
import { tool } from '../tool.ts';

export const listRepositoriesTool = tool({
  name: 'list_repositories',
  title: 'My repositories and their imports',
  description:
    "Your repositories, by name, each with its import (status and the import's JSON) and whether it follows its origin, 100 at a time (after: the last name of the page before). What the home page lists; private repositories only with a token that has the repo scope.",
  mirrors: 'pages/home',
  input: z.object({
    after: z.optional(z.string().check(z.describe('List the repositories after this name.'))),
  }),
  resource: 'Repository',
  readOnly: true,
  run: async (caller, input, urls) => {
    const { entries, next } = await repositoryOverview(caller.user, input.after);
    // The rule `visibleRepository` applies to each repository: private ones need `repo`.
    const seesPrivate = callerHasScope(caller, ['repo']);
    const repositories = entries
      .filter((entry) => seesPrivate || !entry.repository.private)
      .map((entry) => ({
        ...repositoryJson(entry.repository, caller.user, urls),
        import: entry.record ? importJson(entry.record, urls) : null,
        following: entry.following,
      }));
    const lines = repositories.map(
      (repository) =>
        `${repository.full_name}: ${repository.import ? `import ${repository.import.status}` : 'no import'}, ${repository.following}`,
    );
    return {
      text: `${repositories.length} repositories${next ? ` (more after ${next})` : ''}:\n${lines.join('\n')}`,
      structured: { repositories, next_after: next ?? null },
    };
  },
});

export const createRepositoryTool = tool({
  name: 'create_repository',
  title: 'Create a repository',
  description:
    'Creates an empty repository of yours to import into (private needs the repo scope). As POST /user/repos.',
  mirrors: 'repos/create-for-user',
  input: createBody,
  resource: 'Repository',
  readOnly: false,
  run: async (caller, input, urls) => {
    // `public_repo` (the route's lesser scope) may create public repositories only.
    if (input.private && !callerHasScope(caller, ['repo'])) throw notFound();
    const repository = repositoryJson(await createForOwner(caller.user, input), caller.user, urls);
    return { text: `Created ${repository.full_name}.`, structured: repository };
  },
});
