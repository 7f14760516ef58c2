/**
 * The cheap "anything new?" check of a Mercurial origin before a scheduled sync
 * (`#vcs/origin-fingerprint`): three wire-protocol commands over HTTP(S) through the network guard,
 * with the import's credentials, following no redirect (hg follows none off the origin either):
 *
 * - `heads`: every topological head; any new changeset (a commit, a tag, which is a commit to
 *   `.hgtags`, a new named branch) and any changeset made obsolete changes it;
 * - `branchmap`: each named branch's heads, closed ones included;
 * - `listkeys namespace=bookmarks`: every bookmark and its changeset (a bookmark moves or is made
 *   or deleted without a new changeset).
 *
 * The fingerprint is the SHA-256 of the three answers (their lines sorted: a server lists a
 * dictionary in no promised order), so it changes with anything a sync would import.
 */
import { createHash } from 'node:crypto';
import { type AdapterOptions, adapterSetup } from '#vcs/adapter-options';
import { guardedRequest } from '#vcs/network-guard';
import { type OriginAccess, OriginAuthFailed, OriginFailed, type RawJob } from '#vcs/origin';
import { originUrl } from './detect.ts';
import { basicAuth, contentType, HG_TYPE, USER_AGENT } from './wire.ts';

const NODE_LIST = /^(?:[0-9a-f]{40}(?: [0-9a-f]{40})*)?\n?$/;

/** Each command and the shape its answer must have; anything else is not the wire protocol. */
const COMMANDS: readonly { readonly query: string; readonly valid: (body: string) => boolean }[] = [
  { query: 'cmd=heads', valid: (body) => NODE_LIST.test(body) },
  {
    query: 'cmd=branchmap',
    valid: (body) => body.split('\n').every((line) => line === '' || /^\S+(?: [0-9a-f]{40})+$/.test(line)),
  },
  {
    query: 'cmd=listkeys&namespace=bookmarks',
    valid: (body) => body.split('\n').every((line) => line === '' || /^[^\t]+\t[0-9a-f]{40}$/.test(line)),
  },
];

export async function mercurialFingerprint(
  access: OriginAccess & Pick<RawJob, 'choice'>,
  options: AdapterOptions,
): Promise<string> {
  const base = originUrl(access).replace(/\?.*$/, '');
  const { guardFor, idleTimeoutMs } = adapterSetup(options);
  const guard = guardFor(access);
  const headers = { 'user-agent': USER_AGENT, accept: HG_TYPE, ...basicAuth(access) };
  const answers = await Promise.all(
    COMMANDS.map(async ({ query, valid }) => {
      const answer = await guardedRequest(`${base}?${query}`, guard, {
        headers,
        timeoutMs: idleTimeoutMs,
        maxBytes: 16 * 1024 * 1024,
        maxRedirects: 0,
      });
      if (answer.status === 401 || answer.status === 403)
        throw new OriginAuthFailed(
          access.credentials === undefined
            ? 'The origin requires a username and password'
            : 'The origin refused the username and password',
        );
      const body = answer.body.toString('latin1');
      if (
        answer.status !== 200 ||
        contentType(answer.headers) !== HG_TYPE ||
        answer.truncated ||
        !valid(body)
      )
        throw new OriginFailed(`The origin ${new URL(base).host} did not answer ${query} as Mercurial does`);
      return body
        .split('\n')
        .filter((line) => line !== '')
        .sort();
    }),
  );
  const digest = createHash('sha256');
  for (const lines of answers) digest.update(`${lines.join('\n')}\n\0`);
  return `mercurial:${digest.digest('hex')}`;
}
