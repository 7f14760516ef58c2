import type { AuthorsFileResult } from '#services/authors-file';
import type { PublicUrls } from '#shared/urls';
import { importAuthorJson, importUrl } from './import.ts';

/**
 * What an authors file did (`PUT …/import/authors`): what it mapped, the entries that name no
 * author of the history, and the authors the file does not name.
 */
export function authorsFileResultJson(result: AuthorsFileResult, urls: PublicUrls) {
  const { record } = result;
  return {
    format: result.format,
    rewriting: result.rewriting,
    changed: result.changed,
    mapped: result.mapped.map(({ author, name, email }) =>
      importAuthorJson({ ...author, name, email }, record, urls),
    ),
    not_in_history: result.notInHistory.map(({ line, origin, name, email }) => ({
      line,
      origin,
      name,
      email,
    })),
    not_in_file: result.notInFile.map((author) => importAuthorJson(author, record, urls)),
    import_url: importUrl(record, urls),
  };
}
