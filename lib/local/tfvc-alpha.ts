/**
 * Alpha and Beta, the TFVC stand-in's main test history (`tfvc-origin.ts` serves it): two projects
 * sharing a collection's changeset numbers, with every kind of change the adapter replays.
 */
import type { TfvcProjectSpec, TfvcUser } from './tfvc-origin.ts';

export const TFVC_USERS = {
  ada: { displayName: 'Ada Lovelace', uniqueName: 'ada@example.com' },
  bob: { displayName: 'Bob Builder', uniqueName: 'CONTOSO\\bob' },
} as const satisfies Record<string, TfvcUser>;

/** 256 bytes 0..255: a binary file must arrive byte for byte. */
export const TFVC_BINARY = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** Over 2,000 characters: cut in lists (80) and, unless `maxCommentLength` is sent, alone (2,000). */
export const TFVC_LONG_COMMENT = `Rename util to helpers and rewrite it\r\n\r\n${Array.from(
  { length: 40 },
  (_, i) => `Line ${i + 1}: the helpers grew beyond what a util file should hold, so they move.`,
).join('\r\n')}`;

/**
 * Two TFVC projects sharing the collection's changeset numbers. Alpha's history (ids 1, 3, 4, 6,
 * 7, 8, 9, 10): folders, add, edit, an empty comment, rename, delete, rename+edit with a comment
 * over 2,000 characters, a re-added file, a deleted folder (listed with its child), a binary file,
 * a path with a space and non-ASCII letters, a folder rename (listed with its child), a file moved
 * out of the project (listed as a rename only). Its files at the end: `ALPHA_FINAL_TREE`.
 */
export function tfvcHistory(): TfvcProjectSpec[] {
  const { ada, bob } = TFVC_USERS;
  return [
    {
      name: 'Alpha',
      changesets: [
        {
          id: 1,
          author: ada,
          date: '2024-01-01T09:00:00.000Z',
          comment: 'Created team project folder $/Alpha via the Team Project Creation Wizard',
          changes: [],
        },
        {
          id: 3,
          author: ada,
          date: '2024-01-02T10:00:00.000Z',
          comment: 'Initial import',
          changes: [
            { path: 'src', changeType: 'add', folder: true },
            { path: 'src/lib', changeType: 'add', folder: true },
            { path: 'README.md', changeType: 'add, edit, encoding', content: '# Alpha\n' },
            { path: 'src/app.ts', changeType: 'add, edit, encoding', content: 'console.log(1);\n' },
            {
              path: 'src/lib/util.ts',
              changeType: 'add, edit, encoding',
              content: 'export const one = 1;\n',
            },
            { path: 'tools', changeType: 'add', folder: true },
            { path: 'tools/build.cmd', changeType: 'add, edit, encoding', content: '@echo build\r\n' },
          ],
        },
        {
          id: 4,
          author: bob,
          date: '2024-01-03T11:30:00.000Z',
          comment: '',
          changes: [
            { path: 'src/app.ts', changeType: 'edit', content: 'console.log(2);\n' },
            { path: 'docs', changeType: 'add', folder: true },
            { path: 'docs/notes.txt', changeType: 'add, edit, encoding', content: 'notes\r\n' },
          ],
        },
        {
          id: 6,
          author: ada,
          checkedInBy: bob,
          date: '2024-01-05T08:15:00.000Z',
          comment: 'Rename notes, drop the readme',
          changes: [
            { path: 'docs/guide.txt', changeType: 'rename', source: 'docs/notes.txt' },
            { path: 'README.md', changeType: 'delete' },
          ],
        },
        {
          id: 7,
          author: bob,
          date: '2024-01-06T12:00:00.000Z',
          comment: TFVC_LONG_COMMENT,
          changes: [
            {
              path: 'src/lib/helpers.ts',
              changeType: 'rename, edit',
              source: 'src/lib/util.ts',
              content: 'export const one = 1;\nexport const two = 2;\n',
            },
            { path: 'README.md', changeType: 'add, edit, encoding', content: '# Alpha\n\nBack again.\n' },
          ],
        },
        {
          id: 8,
          author: ada,
          date: '2024-01-07T13:00:00.000Z',
          comment: 'Remove docs, add the logo',
          changes: [
            { path: 'docs', changeType: 'delete', folder: true },
            { path: 'docs/guide.txt', changeType: 'delete' },
            { path: 'assets', changeType: 'add', folder: true },
            { path: 'assets/logo.bin', changeType: 'add, edit, encoding', content: TFVC_BINARY },
          ],
        },
        {
          id: 9,
          author: bob,
          date: '2024-01-08T14:00:00.000Z',
          comment: 'Unicode',
          changes: [{ path: 'src/ünïcode file.txt', changeType: 'add, edit, encoding', content: 'grüße\n' }],
        },
        {
          id: 10,
          author: ada,
          date: '2024-01-09T15:00:00.000Z',
          comment: 'Move lib to core',
          changes: [
            { path: 'src/core', changeType: 'rename', folder: true, source: 'src/lib' },
            { path: 'src/core/helpers.ts', changeType: 'rename', source: 'src/lib/helpers.ts' },
            { path: '$/Archive/build.cmd', changeType: 'rename', source: 'tools/build.cmd' },
          ],
        },
      ],
    },
    {
      name: 'Beta',
      changesets: [
        {
          id: 2,
          author: bob,
          date: '2024-01-01T10:00:00.000Z',
          comment: 'Beta starts',
          changes: [{ path: 'beta.txt', changeType: 'add, edit, encoding', content: 'beta\n' }],
        },
        {
          id: 5,
          author: bob,
          date: '2024-01-04T10:00:00.000Z',
          comment: 'Beta grows',
          changes: [{ path: 'beta.txt', changeType: 'edit', content: 'beta\nmore\n' }],
        },
      ],
    },
  ];
}

/** Alpha's files after changeset 10, with their contents. */
export const ALPHA_FINAL_TREE: Readonly<Record<string, string | Buffer>> = {
  'README.md': '# Alpha\n\nBack again.\n',
  'assets/logo.bin': TFVC_BINARY,
  'src/app.ts': 'console.log(2);\n',
  'src/core/helpers.ts': 'export const one = 1;\nexport const two = 2;\n',
  'src/ünïcode file.txt': 'grüße\n',
};
