import { isAuthorEmail, isAuthorName } from '#domain/imports';
import { mapImportAuthor } from '#services/imports';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';

/**
 * POST /:owner/:repo/import/authors/:author_id: the API's PATCH …/import/authors/:author_id with
 * the name and email typed (a blank field leaves that part unchanged).
 */
export const handler = importPageHandler((request, caller, repo) => {
  const authorId = Number(request.params.author_id);
  const name = (request.form.get('name') ?? '').trim();
  const email = (request.form.get('email') ?? '').trim();
  return changeThenBack(
    request,
    caller,
    repo,
    async () => {
      if (name === '' && email === '') throw formRefused('Enter a name, an email, or both.');
      if (name !== '' && !isAuthorName(name))
        throw formRefused('The name must be one line without < or >, at most 255 characters.');
      if (email !== '' && !isAuthorEmail(email))
        throw formRefused('The email must look like someone@example.com, at most 255 characters.');
      await mapImportAuthor(caller, repo.owner, repo.repo, authorId, {
        ...(name === '' ? {} : { name }),
        ...(email === '' ? {} : { email }),
      });
    },
    { typed: { id: authorId, name, email } },
  );
});
