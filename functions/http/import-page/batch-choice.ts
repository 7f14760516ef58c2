import { derivedRepositoryName } from '#domain/import-batches';
import { createImportBatch, type NamedProject } from '#services/import-batches';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';
import { batchPagePath } from './paths.ts';

/**
 * POST /:owner/:repo/import/batch: the page's "import several projects, one repository each"
 * (`POST /user/import-batches` with `from_import`). `scope=all` takes every project found,
 * `scope=ticked` the ticked ones (`project` fields: their positions); each project's repository
 * is its `name-<position>` field (derived when empty). The first one is imported here, as "import
 * this one here" would; the browser goes on to the batch's page.
 */
export const handler = importPageHandler((request, caller, repo) => {
  let batchId = 0;
  return changeThenBack(
    request,
    caller,
    repo,
    async () => {
      const { form } = request;
      const all = form.get('scope') === 'all';
      const count = Number(form.get('count') ?? '0');
      if (!Number.isInteger(count) || count < 1 || count > 10_000)
        throw formRefused('The list of projects was not sent; reload the page and try again.');
      const ticked = new Set(form.getAll('project'));
      const projects: NamedProject[] = [];
      for (let index = 0; index < count; index++) {
        if (!all && !ticked.has(String(index))) continue;
        const name = form.get(`project-name-${index}`) ?? '';
        const repository = (form.get(`name-${index}`) ?? '').trim();
        projects.push({ name, repository: repository === '' ? derivedRepositoryName(name) : repository });
      }
      if (projects.length === 0) throw formRefused('Tick at least one project to import.');
      const view = await createImportBatch(caller, {
        source: { kind: 'from-import', owner: repo.owner, repo: repo.repo, projects },
        choices: {},
      });
      batchId = view.batch.id;
    },
    { next: () => batchPagePath(batchId) },
  );
});
