import * as z from 'zod/mini';
import { cutOverImport, followImportOrigin, importSync, syncNow } from '#services/import-sync';
import { aliasedBoolean } from '../../imports/deprecated-alias.ts';
import { body as followBody } from '../../imports/follow.ts';
import { importJson } from '../../json/import.ts';
import { importSyncJson } from '../../json/import-sync.ts';
import { fullName, POLL_HINT, repositoryFields, tool } from '../tool.ts';
import { statusSentence } from './imports.ts';

const syncSentence = (name: string, json: ReturnType<typeof importSyncJson>) =>
  `${name} ${json.state === 'following' ? `follows its origin (${json.interval_minutes === null ? 'on demand' : `every ${json.interval_minutes} minutes`})` : `is ${json.state}`}; last synced ${json.last_synced_at ?? 'never'}.`;

export const getSyncTool = tool({
  name: 'get_import_sync',
  title: 'Whether a repository follows its origin',
  description:
    'The sync resource: off, following (with its interval and the last sync), or cut_over. As GET /repos/{owner}/{repo}/import/sync.',
  mirrors: 'imports/get-sync',
  input: z.object(repositoryFields),
  resource: 'ImportSync',
  readOnly: true,
  run: async (caller, input, urls) => {
    const { record, sync } = await importSync(caller, input.owner, input.repo);
    const json = importSyncJson(record, sync, urls);
    return { text: syncSentence(fullName(input), json), structured: json };
  },
});

export const followTool = tool({
  name: 'follow_origin',
  title: 'Follow the origin',
  description:
    'After a complete import, the repository follows its origin until the cut-over: synced every interval_minutes (null: only on sync_now), read-only for pushes meanwhile. As PUT /repos/{owner}/{repo}/import/sync.',
  mirrors: 'imports/follow',
  input: z.extend(followBody, repositoryFields),
  resource: 'ImportSync',
  readOnly: false,
  run: async (caller, input, urls) => {
    const { record, sync } = await followImportOrigin(
      caller,
      input.owner,
      input.repo,
      input.interval_minutes,
      aliasedBoolean(
        'ImportSync',
        'keep_refs_deleted_while_following',
        input.keep_refs_deleted_while_following,
        'keep_deleted_refs',
        input.keep_deleted_refs,
      ),
    );
    const json = importSyncJson(record, sync, urls);
    return { text: syncSentence(fullName(input), json), structured: json };
  },
});

export const syncNowTool = tool({
  name: 'sync_now',
  title: 'Sync now',
  description: `Syncs a followed origin now: the import goes through its statuses back to complete. As POST /repos/{owner}/{repo}/import/sync. ${POLL_HINT}`,
  mirrors: 'imports/sync-now',
  input: z.object(repositoryFields),
  resource: 'ImportSync',
  readOnly: false,
  run: async (caller, input, urls) => {
    const json = importJson(await syncNow(caller, input.owner, input.repo), urls);
    return { text: `Sync started. ${statusSentence(fullName(input), json)}`, structured: json };
  },
});

export const cutOverTool = tool({
  name: 'cut_over',
  title: 'Cut over',
  description:
    'Ends following: the repository stops syncing and accepts pushes again (refused while a sync runs). As DELETE /repos/{owner}/{repo}/import/sync.',
  mirrors: 'imports/cut-over',
  input: z.object(repositoryFields),
  resource: 'ImportSync',
  readOnly: false,
  run: async (caller, input, urls) => {
    const { record, sync } = await cutOverImport(caller, input.owner, input.repo);
    const json = importSyncJson(record, sync, urls);
    return { text: syncSentence(fullName(input), json), structured: json };
  },
});
