import { newImportHandler } from './new-import.ts';
import { newImportPage } from './views.ts';

/** GET /new/import: the import form. */
export const handler = newImportHandler(async (request) => newImportPage(request));
