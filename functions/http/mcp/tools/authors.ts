import * as z from 'zod/mini';
import { pageRequest } from '#domain/pagination';
import { applyAuthorsFile } from '#services/authors-file';
import { applyAuthorsFileToBatch } from '#services/import-batch-authors';
import { importAuthors, mapImportAuthor } from '#services/imports';
import { authorsFileBody } from '../../imports/authors-file-body.ts';
import { body as mapAuthorBody } from '../../imports/map-author.ts';
import { authorsFileResultJson } from '../../json/authors-file.ts';
import { importAuthorJson } from '../../json/import.ts';
import { batchAuthorsJson } from '../../json/import-batch.ts';
import { fullName, pageFields, pageQuery, repositoryFields, tool } from '../tool.ts';

/** What a mapping does to a complete import, and how long to wait. */
const REWRITE_HINT =
  'A complete import is rewritten (status mapping, then complete again; a mapping sent during a rewrite makes one more): poll get_import_status until complete before following the origin.';

export const listAuthorsTool = tool({
  name: 'list_import_authors',
  title: "An import's authors",
  description:
    "The authors of an imported history (remote_id, remote_name, and the name and email they were given), one page at a time. As GET /repos/{owner}/{repo}/import/authors. Authors can be mapped once the import's status is complete.",
  mirrors: 'imports/list-authors',
  input: z.object({
    ...repositoryFields,
    since: z.optional(z.string().check(z.describe('Only authors with a higher id (an author id).'))),
    ...pageFields,
  }),
  resource: 'ImportAuthor',
  readOnly: true,
  run: async (caller, input, urls) => {
    const page = pageRequest(pageQuery(input));
    const { record, authors } = await importAuthors(caller, input.owner, input.repo, input.since, page);
    const listed = authors.items.map((author) => importAuthorJson(author, record, urls));
    const more = page.page * page.perPage < authors.total;
    return {
      text: `${fullName(input)} has ${authors.total} authors; page ${page.page} lists ${listed.length}${more ? `, page ${page.page + 1} follows` : ''}.`,
      structured: {
        total_count: authors.total,
        page: page.page,
        next_page: more ? page.page + 1 : null,
        authors: listed,
      },
    };
  },
});

export const mapAuthorTool = tool({
  name: 'map_import_author',
  title: 'Map an author',
  description: `Gives an author of the import the name and/or email their commits carry (rewrites the imported history once the import is complete). As PATCH /repos/{owner}/{repo}/import/authors/{author_id}; author_id is an id from list_import_authors. ${REWRITE_HINT}`,
  mirrors: 'imports/map-author',
  input: z.extend(mapAuthorBody, {
    ...repositoryFields,
    author_id: z.number().check(z.describe('The author id (list_import_authors).')),
  }),
  resource: 'ImportAuthor',
  readOnly: false,
  run: async (caller, input, urls) => {
    const { record, author } = await mapImportAuthor(caller, input.owner, input.repo, input.author_id, {
      name: input.name,
      email: input.email,
    });
    return {
      text: `Author ${author.id} (${author.remoteId}) of ${fullName(input)} is now ${author.name} <${author.email}>.`,
      structured: importAuthorJson(author, record, urls),
    };
  },
});

export const applyAuthorsFileTool = tool({
  name: 'apply_authors_file',
  title: 'Apply an authors file',
  description: `Maps the authors a git-svn authors.txt ("remote = Name <email>" lines) or a CSV (remote,name,email) names, in one rewrite. Answers what it mapped, the entries that name no author of the history, and the authors the file does not name. As PUT /repos/{owner}/{repo}/import/authors. ${REWRITE_HINT}`,
  mirrors: 'imports/apply-authors-file',
  input: z.extend(authorsFileBody, repositoryFields),
  resource: 'AuthorsFile',
  readOnly: false,
  run: async (caller, input, urls) => {
    const result = await applyAuthorsFile(caller, input.owner, input.repo, {
      format: input.format,
      content: input.content,
    });
    const json = authorsFileResultJson(result, urls);
    return {
      text: `The authors file (${result.format}) mapped ${result.mapped.length} authors of ${fullName(input)}; ${result.notInHistory.length} entries name no author of the history, ${result.notInFile.length} authors are not in the file.`,
      structured: json,
    };
  },
});

export const applyBatchAuthorsFileTool = tool({
  name: 'apply_batch_authors_file',
  title: 'Apply an authors file to a batch',
  description:
    'One authors file (as apply_authors_file takes it) for every complete import of a batch; the others are skipped. As PUT /user/import-batches/{batch_id}/authors.',
  mirrors: 'import-batches/authors',
  input: z.extend(authorsFileBody, { batch_id: z.number().check(z.describe('The batch id.')) }),
  resource: 'AuthorsFile',
  readOnly: false,
  run: async (caller, input, urls) => {
    const json = batchAuthorsJson(
      await applyAuthorsFileToBatch(caller, input.batch_id, { format: input.format, content: input.content }),
      urls,
    );
    return {
      text: `The authors file was applied to batch ${input.batch_id}: ${json.outcomes.map((one) => `${one.repository} ${one.outcome}`).join(', ')}.`,
      structured: json,
    };
  },
});
