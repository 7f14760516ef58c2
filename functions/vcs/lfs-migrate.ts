/**
 * The LFS choice's rewrite: large blobs become Git LFS pointer files. `git lfs migrate import`
 * rewrites annotated tags even where nothing under them changed, dropping their messages' trailing
 * newline; the messages are written back after it.
 */

import { runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';

/**
 * `git lfs migrate import --everything --above=<threshold>` in `repoDir` (pointer files,
 * `.gitattributes` as git-lfs writes it, objects in `repoDir/lfs/objects`), then annotated tag
 * messages restored where migrate changed them. `objectMap`, when given, receives git-lfs's
 * `old,new` lines for the commits it changed (commits it left alone are not listed).
 */
export async function migrateToLfs(
  repoDir: string,
  thresholdBytes: number,
  job: GitJob,
  objectMap?: string,
): Promise<void> {
  const before = await annotatedTagMessages(repoDir, job);
  await runGit(
    [
      'lfs',
      'migrate',
      'import',
      '--everything',
      `--above=${thresholdBytes}b`,
      '--yes',
      ...(objectMap ? [`--object-map=${objectMap}`] : []),
    ],
    local(repoDir, job),
  );
  await restoreTagMessages(repoDir, before, job);
}

interface TagObject {
  readonly oid: string;
  readonly header: string;
  readonly message: string;
}

/** Annotated tags by ref name, split into header and message (bytes kept as latin1 text). */
async function annotatedTagMessages(repoDir: string, job: GitJob): Promise<Map<string, TagObject>> {
  const out = await runGit(
    ['for-each-ref', '--format=%(objecttype) %(objectname) %(refname)', 'refs/tags/'],
    local(repoDir, job),
  );
  const tags = new Map<string, string>();
  for (const line of out.toString('utf8').split('\n')) {
    const [type, oid, ref] = line.split(' ');
    if (type === 'tag' && oid && ref) tags.set(ref, oid);
  }
  if (tags.size === 0) return new Map();
  const batch = await runGit(['cat-file', '--batch'], {
    ...local(repoDir, job),
    input: `${[...tags.values()].join('\n')}\n`,
  });
  const bodies = new Map<string, TagObject>();
  let at = 0;
  while (at < batch.length) {
    const lineEnd = batch.indexOf(10, at);
    const [oid = '', , size = '0'] = batch.subarray(at, lineEnd).toString('latin1').split(' ');
    const content = batch.subarray(lineEnd + 1, lineEnd + 1 + Number(size)).toString('latin1');
    at = lineEnd + 1 + Number(size) + 1;
    const split = content.indexOf('\n\n');
    const header = split < 0 ? content : content.slice(0, split + 1);
    const message = split < 0 ? '' : content.slice(split + 2);
    bodies.set(oid, { oid, header, message });
  }
  const byRef = new Map<string, TagObject>();
  for (const [ref, oid] of tags) {
    const body = bodies.get(oid);
    if (body) byRef.set(ref, body);
  }
  return byRef;
}

/** Writes each tag again with its message from `before` where a rewrite changed it; the header (new target) stays. */
async function restoreTagMessages(
  repoDir: string,
  before: Map<string, TagObject>,
  job: GitJob,
): Promise<void> {
  const after = await annotatedTagMessages(repoDir, job);
  const updates: string[] = [];
  for (const [ref, tag] of after) {
    const original = before.get(ref);
    if (!original || original.message === tag.message) continue;
    const content = Buffer.from(`${tag.header}\n${original.message}`, 'latin1');
    const oid = (
      await runGit(['hash-object', '-t', 'tag', '-w', '--stdin'], { ...local(repoDir, job), input: content })
    )
      .toString('utf8')
      .trim();
    updates.push(`update ${ref} ${oid} ${tag.oid}`);
  }
  if (updates.length > 0) {
    await runGit(['update-ref', '--stdin'], { ...local(repoDir, job), input: `${updates.join('\n')}\n` });
  }
}
