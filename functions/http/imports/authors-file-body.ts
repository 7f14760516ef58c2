import * as z from 'zod/mini';
import { AUTHORS_FILE_FORMATS } from '#domain/authors-file';

/** The body of an authors file: PUT …/import/authors, and a whole batch's PUT …/authors. */
export const authorsFileBody = z.object({
  format: z.optional(z.enum(AUTHORS_FILE_FORMATS as ['authors_txt', 'csv'])),
  content: z.string(),
});
