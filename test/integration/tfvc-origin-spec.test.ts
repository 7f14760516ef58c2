import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TFVC_LONG_COMMENT, tfvcHistory } from '#local/tfvc-alpha';
import { FABRIKAM, fabrikamProjects, fabrikamShelvesets } from '#local/tfvc-fabrikam';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';

/**
 * The TFVC stand-in answers as Microsoft's REST specification and its recorded examples say
 * (test/fixtures/tfvc/README.md), so that adapter tests against it mean something for a real
 * server: the shapes of two recorded answers, content chosen by `$format` then `Accept`, comment
 * cuts, .NET flag order and continuation tokens.
 */

let server: TfvcServer;
let fabrikam: TfvcServer;

beforeAll(async () => {
  [server, fabrikam] = await Promise.all([
    serveTfvc({ projects: tfvcHistory(), maxPage: 3 }),
    serveTfvc({ projects: fabrikamProjects(), shelvesets: fabrikamShelvesets() }),
  ]);
});

afterAll(async () => {
  await Promise.all([server?.close(), fabrikam?.close()]);
});

/** A JSON value's structure: each object's keys with the structure of their values. */
type Shape = string | Shape[] | { [key: string]: Shape };
function shapeOf(value: unknown): Shape {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (value === null) return 'null';
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, shapeOf(inner)]),
    );
  return typeof value;
}

async function recorded(name: string): Promise<Record<string, unknown>> {
  const file = join(import.meta.dirname, '../fixtures/tfvc', name);
  const example = JSON.parse(await readFile(file, 'utf8')) as { responses: { 200: { body: unknown } } };
  return example.responses[200].body as Record<string, unknown>;
}

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.collectionUrl}/${path}`, { headers });
const body = async (path: string, headers: Record<string, string> = {}) =>
  (await (await get(path, headers)).json()) as Record<string, unknown> & { value: Record<string, unknown>[] };

describe('the TFVC stand-in against the recorded examples', () => {
  it("answers a changeset's changes in the recorded shape", async () => {
    const example = await recorded('GET__tfvc_changesetChanges.json');
    const answer = await body('_apis/tfvc/changesets/4/changes?api-version=6.0');
    expect(Object.keys(answer).sort()).toEqual(Object.keys(example).sort());
    const edit = answer.value.find((change) => change.changeType === 'edit');
    expect(shapeOf(edit)).toEqual(shapeOf((example.value as unknown[])[0]));
  });

  it("answers an item's JSON metadata, not its content, unless $format or Accept ask for bytes", async () => {
    const example = await recorded('GET__tfvc_items_path.json');
    const item = '_apis/tfvc/items?path=$/Alpha/src/app.ts&versionDescriptor.version=4&api-version=6.0';
    for (const headers of [{}, { accept: 'application/json' }, { accept: '*/*' }] as Record<
      string,
      string
    >[]) {
      const answer = await get(item, headers);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(shapeOf(await answer.json())).toEqual(shapeOf(example));
    }
    const attachment = await get(`${item}&download=true`, { accept: 'application/json' });
    expect(attachment.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(shapeOf(await attachment.json())).toEqual(shapeOf(example));

    for (const [query, headers] of [
      ['&$format=octetStream', { accept: 'application/json' }],
      ['', { accept: 'application/octet-stream' }],
    ] as const) {
      const answer = await get(`${item}${query}`, headers);
      expect(answer.headers.get('content-type')).toBe('application/octet-stream');
      expect(await answer.text()).toBe('console.log(2);\n');
    }
    // `$format` comes before `Accept`.
    const json = await get(`${item}&$format=json`, { accept: 'application/octet-stream' });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe("the TFVC stand-in's labels, shelvesets and branches against the recorded examples", () => {
  const from = async (path: string) =>
    (await (await fetch(`${fabrikam.collectionUrl}/${path}`)).json()) as Record<string, unknown> & {
      value: Record<string, unknown>[];
    };
  /** The recorded list and the stand-in's: the same envelope, each entry in the same shape. */
  const sameList = (answer: Record<string, unknown>, example: Record<string, unknown>) => {
    expect(Object.keys(answer).sort()).toEqual(['count', 'value']);
    const entries = answer.value as unknown[];
    expect(answer.count).toBe(entries.length);
    expect(entries.map(shapeOf)).toContainEqual(shapeOf((example.value as unknown[])[0]));
  };

  it('lists labels newest first, and shelvesets with their changes', async () => {
    const labels = await from(`${FABRIKAM}/_apis/tfvc/labels?requestData.labelScope=$/${FABRIKAM}`);
    sameList(labels, await recorded('GET__tfvc_labels.json'));
    expect(labels.value.map((label) => label.name)).toEqual(['Another label', 'That label', 'This label']);

    const shelvesets = await from('_apis/tfvc/shelvesets?requestData.maxCommentLength=1000');
    sameList(shelvesets, await recorded('GET__tfvc_shelvesets_list.json'));
    expect(shelvesets.value.map((shelveset) => shelveset.name)).toEqual([
      'My first shelveset',
      'More changes',
      'Doc updates',
      'Set this aside for now',
    ]);
    const first = shelvesets.value[0]?.id as string;
    const changes = await from(`_apis/tfvc/shelvesets/changes?shelvesetId=${encodeURIComponent(first)}`);
    const example = await recorded('GET__tfvc_shelvesetChanges__shelvesetId.json');
    expect(Object.keys(changes).sort()).toEqual(['count', 'value']);
    // The recorded changes of a new file have no `version`: the stand-in sends none.
    expect(changes.value.map(shapeOf)).toContainEqual(shapeOf((example.value as unknown[])[2]));
    expect(changes.value.map((change) => change.changeType)).toEqual(
      (example.value as { changeType: string }[])
        .filter((_, i) => i !== 1)
        .map((change) => change.changeType),
    );
  });

  it('lists branch refs under a scope, and answers one branch with its parent', async () => {
    const refs = await from(`${FABRIKAM}/_apis/tfvc/branches?scopePath=$/${FABRIKAM}`);
    sameList(refs, await recorded('GET__tfvc_branchRefs.json'));
    expect(refs.value.map((branch) => branch.path)).toEqual([
      `$/${FABRIKAM}/AuthSample`,
      `$/${FABRIKAM}/AuthSample-dev`,
    ]);
    const deleted = await from(`${FABRIKAM}/_apis/tfvc/branches?scopePath=$/${FABRIKAM}&includeDeleted=true`);
    expect(deleted.value.at(-1)).toMatchObject({ path: `$/${FABRIKAM}/AuthSample+Special`, isDeleted: true });

    const one = await from(
      `${FABRIKAM}/_apis/tfvc/branches?path=$/${FABRIKAM}/AuthSample-dev&includeParent=true`,
    );
    const example = await recorded('GET__tfvc_branches__path__includeParent-true.json');
    expect(shapeOf(one)).toEqual(shapeOf(example));
    expect(one.parent).toEqual({ path: `$/${FABRIKAM}/AuthSample` });
  });
});

describe('the TFVC stand-in follows the specification', () => {
  it('cuts comments at 80 characters in lists and 2,000 alone, unless maxCommentLength', async () => {
    const list = await body('Alpha/_apis/tfvc/changesets?$orderby=id asc&searchCriteria.fromId=7');
    const seven = list.value.find((changeset) => changeset.changesetId === 7);
    expect(seven).toMatchObject({ comment: TFVC_LONG_COMMENT.slice(0, 80), commentTruncated: true });
    expect(TFVC_LONG_COMMENT.length).toBeGreaterThan(2000);
    expect(await body('_apis/tfvc/changesets/7')).toMatchObject({
      comment: TFVC_LONG_COMMENT.slice(0, 2000),
      commentTruncated: true,
    });
    const whole = await body('_apis/tfvc/changesets/7?maxCommentLength=100000');
    expect(whole.comment).toBe(TFVC_LONG_COMMENT);
    expect(whole.commentTruncated).toBeUndefined();
    // Newest first unless asked otherwise.
    const newest = await body('Alpha/_apis/tfvc/changesets');
    expect(newest.value.map((changeset) => changeset.changesetId)).toEqual([10, 9, 8]);
  });

  it('writes change types in .NET flag order and pages changes with x-ms-continuationtoken', async () => {
    const seven = await body('_apis/tfvc/changesets/7/changes');
    expect(seven.value.map((change) => change.changeType).sort()).toEqual([
      'add, edit, encoding',
      'edit, rename',
    ]);

    const paths: string[] = [];
    let answer = await get('_apis/tfvc/changesets/3/changes?$top=2');
    for (;;) {
      const page = (await answer.json()) as { count: number; value: { item: { path: string } }[] };
      expect(page.count).toBe(page.value.length);
      paths.push(...page.value.map((change) => change.item.path));
      const token = answer.headers.get('x-ms-continuationtoken');
      if (token === null) break;
      answer = await get(`_apis/tfvc/changesets/3/changes?$top=2&continuationToken=${token}`);
    }
    expect(paths).toHaveLength(7);
    expect(paths).toEqual([...paths].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
  });
});
