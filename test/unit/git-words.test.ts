import { describe, expect, it } from 'vitest';
import { FAILURE_TAIL_CHARS } from '#vcs/bounded-process';
import { gitWords } from '#vcs/git-words';

/*
 * What a user reads of git's stderr when a fetch fails (`error_message`). The stderr below has
 * the shape git printed when the old `git://` tunnel dropped the Lua history mid-pack (issue 18):
 * thousands of `\r`-separated progress lines, the tail kept by the process runner cut mid-line,
 * then git's reasons.
 */
describe('gitWords', () => {
  const ending =
    '\rfetch-pack: unexpected disconnect while reading sideband packet\nfatal: early EOF\nfatal: fetch-pack: invalid index-pack output\n';
  const progress = (label: string, n: number) =>
    `\r${label}: ${String(n % 100).padStart(3)}% (${n * 167}/16691)   `;

  it('keeps the reasons and drops every progress line, a cut one at the start of the tail too', () => {
    let body = '';
    for (let n = 0; body.length < FAILURE_TAIL_CHARS * 2; n++)
      body += progress(n % 2 ? 'remote: Counting objects' : 'Receiving objects', n);
    const tail = (body + ending).slice(-FAILURE_TAIL_CHARS);
    expect(gitWords(tail)).toBe(
      'fetch-pack: unexpected disconnect while reading sideband packet; fatal: early EOF; fatal: fetch-pack: invalid index-pack output',
    );
  });

  it('hides the paths it is given and credentials in URLs, and keeps the first lines when long', () => {
    const words = gitWords(
      "fatal: could not read '/srv/imports/a/raw.git/packed-refs' from https://u:s3cret@example.org/x.git\n" +
        `error: ${'x'.repeat(500)}\n`,
      ['/srv/imports/a'],
    );
    expect(words).toMatch(
      /^fatal: could not read '…\/raw.git\/packed-refs' from https:\/\/\*\*\*@example.org\/x.git; …$/,
    );
  });
});
