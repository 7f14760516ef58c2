import { applyAuthorsFile } from '#services/authors-file';
import { authorsFileAnswer, authorsFileOfForm } from './authors-view.ts';
import { changeThenBack, importPageHandler } from './import-page.ts';

/**
 * POST /:owner/:repo/import/authors: the API's PUT …/import/authors with the file chosen or pasted
 * in the form. The answer is a page of what it mapped; a refused file shows the progress page again with
 * one message per bad line.
 */
export const handler = importPageHandler(async (request, caller, repo) => {
  let answer: ReturnType<typeof authorsFileAnswer> | undefined;
  const refused = await changeThenBack(request, caller, repo, async () => {
    answer = authorsFileAnswer(
      repo,
      await applyAuthorsFile(caller, repo.owner, repo.repo, authorsFileOfForm(request)),
    );
  });
  return answer ?? refused;
});
