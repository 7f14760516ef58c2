/**
 * A TFVC project named after Microsoft's recorded examples (`test/fixtures/tfvc/`): the project
 * `Fabrikam-Fiber-TFVC`, its branches `AuthSample` → `AuthSample-dev` → `AuthSample+Special`, the
 * labels and shelvesets of the recorded lists, with a history that leaves folders empty in every
 * way TFVC can (added empty, emptied by a delete, renamed while empty, holding only an empty
 * folder, filled later). A second project, `Other`, owns a label and a shelveset that must not be
 * reported for Fabrikam.
 */
import type { TfvcProjectSpec, TfvcShelvesetSpec, TfvcUser } from './tfvc-origin.ts';

export const FABRIKAM = 'Fabrikam-Fiber-TFVC';

const chuck: TfvcUser = { displayName: 'Chuck Reinhart', uniqueName: 'fabrikamfiber3@hotmail.com' };
const normal: TfvcUser = { displayName: 'Normal Paulk', uniqueName: 'fabrikamfiber16@hotmail.com' };

const add = (path: string, content: string) => ({ path, changeType: 'add, edit, encoding', content });
const folder = (path: string, changeType = 'add') => ({ path, changeType, folder: true });

export function fabrikamProjects(): TfvcProjectSpec[] {
  return [
    {
      name: FABRIKAM,
      changesets: [
        {
          id: 1,
          author: chuck,
          date: '2014-03-24T16:00:00Z',
          comment: 'Created team project folder',
          changes: [],
        },
        {
          id: 2,
          author: chuck,
          date: '2014-03-24T16:25:17Z',
          comment: 'AuthSample',
          changes: [
            folder('AuthSample'),
            folder('AuthSample/Code'),
            folder('AuthSample/Code/Properties'),
            folder('AuthSample/Docs'),
            add('AuthSample/AuthSample.sln', 'solution\r\n'),
            add('AuthSample/Code/AuthSample.cs', 'class AuthSample {}\r\n'),
            folder('Tools'),
            add('Tools/build.cmd', '@echo build\r\n'),
            folder('Assets'),
            folder('Assets/Icons'),
          ],
        },
        {
          id: 3,
          author: chuck,
          date: '2014-03-24T16:46:48Z',
          comment: 'Branched from $/Fabrikam-Fiber-TFVC/AuthSample',
          changes: [
            folder('AuthSample-dev', 'branch'),
            folder('AuthSample-dev/Code', 'branch'),
            folder('AuthSample-dev/Code/Properties', 'branch'),
            folder('AuthSample-dev/Docs', 'branch'),
            { path: 'AuthSample-dev/AuthSample.sln', changeType: 'branch', content: 'solution\r\n' },
            {
              path: 'AuthSample-dev/Code/AuthSample.cs',
              changeType: 'branch',
              content: 'class AuthSample {}\r\n',
            },
          ],
        },
        {
          id: 4,
          author: normal,
          date: '2014-03-25T09:00:00Z',
          comment: 'Assembly info; the sample moves out',
          changes: [
            add('AuthSample/Code/Properties/AssemblyInfo.cs', '[assembly: AssemblyTitle("AuthSample")]\r\n'),
            { path: 'AuthSample/Code/AuthSample.cs', changeType: 'delete' },
          ],
        },
        {
          id: 5,
          author: normal,
          date: '2014-03-26T09:00:00Z',
          comment: 'Docs is Documentation',
          changes: [
            {
              path: 'AuthSample/Documentation',
              changeType: 'rename',
              folder: true,
              source: 'AuthSample/Docs',
            },
          ],
        },
        {
          id: 6,
          author: chuck,
          date: '2014-03-27T09:00:00Z',
          comment: 'No more build script; the dev sample goes',
          changes: [
            { path: 'Tools/build.cmd', changeType: 'delete' },
            { path: 'AuthSample-dev/Code/AuthSample.cs', changeType: 'delete' },
          ],
        },
      ],
      labels: [
        { id: 2882, name: 'This label', owner: chuck, date: '2014-03-24T18:56:21.77Z' },
        { id: 2883, name: 'That label', owner: chuck, date: '2014-03-24T18:56:32.097Z' },
        {
          id: 2884,
          name: 'Another label',
          owner: chuck,
          scope: 'AuthSample',
          date: '2014-03-24T19:10:53.22Z',
        },
      ],
      branches: [
        { path: 'AuthSample', owner: chuck, date: '2014-03-24T16:25:17.39Z' },
        { path: 'AuthSample-dev', parent: 'AuthSample', owner: chuck, date: '2014-03-24T16:46:48.253Z' },
        {
          path: 'AuthSample+Special',
          parent: 'AuthSample-dev',
          description: 'Branched from $/Fabrikam-Fiber-TFVC/AuthSample-dev',
          owner: chuck,
          date: '2014-03-24T16:52:10.407Z',
          deleted: true,
        },
      ],
    },
    {
      name: 'Other',
      changesets: [
        {
          id: 7,
          author: normal,
          date: '2014-03-28T09:00:00Z',
          comment: 'Other',
          changes: [add('readme.md', 'other\n')],
        },
      ],
      labels: [{ id: 2885, name: 'Other label', owner: normal, date: '2014-03-28T10:00:00Z' }],
    },
  ];
}

/** The recorded list's shelvesets; `Doc updates` touches only `$/Other`. */
export function fabrikamShelvesets(): TfvcShelvesetSpec[] {
  const code = `$/${FABRIKAM}/AuthSample/Code`;
  return [
    {
      name: 'My first shelveset',
      owner: normal,
      date: '2014-07-18T03:37:52.277Z',
      comment: 'Here is a really long comment describing this shelveset.',
      changes: [
        { path: `${code}/App.config`, changeType: 'edit' },
        { path: `${code}/FabrikamEngine.cs`, changeType: 'add, edit, encoding' },
        { path: `${code}/Properties/AssemblyInfo.cs`, changeType: 'delete' },
      ],
    },
    {
      name: 'More changes',
      owner: normal,
      date: '2014-07-18T03:29:45.91Z',
      changes: [
        { path: '$/Other/notes.txt', changeType: 'edit' },
        { path: `${code}/AuthSample.cs`, changeType: 'edit' },
      ],
    },
    {
      name: 'Doc updates',
      owner: normal,
      date: '2014-07-18T03:27:25.18Z',
      changes: [{ path: '$/Other/readme.md', changeType: 'edit' }],
    },
    {
      name: 'Set this aside for now',
      owner: chuck,
      date: '2014-03-24T20:32:25.37Z',
      changes: [{ path: `$/${FABRIKAM}/AuthSample/AuthSample.sln`, changeType: 'edit' }],
    },
  ];
}

/** Fabrikam's files after changeset 6. */
export const FABRIKAM_FILES = [
  'AuthSample-dev/AuthSample.sln',
  'AuthSample/AuthSample.sln',
  'AuthSample/Code/Properties/AssemblyInfo.cs',
];

/** Fabrikam's empty folders after changeset 6. */
export const FABRIKAM_EMPTY_FOLDERS = [
  'Assets/Icons',
  'AuthSample-dev/Code/Properties',
  'AuthSample-dev/Docs',
  'AuthSample/Documentation',
  'Tools',
];
