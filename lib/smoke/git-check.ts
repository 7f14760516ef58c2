import { pathPattern, VPC_ORIGINS_SECURITY_GROUP } from '#cdk/web-distribution';
import { type Check, fail, pass, routeOf, type SmokeTarget, urlOf } from './check.ts';
import { type Answer, fromCloudFront, probe, summary } from './probe.ts';
import { named, RESOURCES, type StackResource } from './resources.ts';

const INFO_REFS = routeOf('git/info-refs');

/** Asked for when no repository is given: the front end's 401 or 404 for it proves the path. */
const ABSENT = { owner: 'smoke-check', name: 'no-such-repository' };

const ADVERTISEMENT = 'application/x-git-upload-pack-advertisement';

/** Git's own refusals, as the front end answers them (`functions/git-server/replies.ts`). */
const isGitRefusal = (answer: Answer): boolean =>
  answer.headers.get('content-type')?.startsWith('text/plain') === true &&
  (answer.status === 404 ||
    (answer.status === 401 && /^Basic /.test(answer.headers.get('www-authenticate') ?? '')));

/** Where to look when CloudFront's answer to a Git path is not the Git front end's. */
function diagnosis(answer: Answer, target: SmokeTarget): string {
  const look = (resource: StackResource) => named(resource, target.stackName);
  const origin = `the ${look(RESOURCES.vpcOrigin)} (the ${look(RESOURCES.loadBalancer)})`;
  switch (answer.status) {
    case 504:
      return `CloudFront got no answer from ${origin}. Look first at the ${look(RESOURCES.loadBalancerSecurityGroup)}: its inbound rule on port 80 must admit the security group ${VPC_ORIGINS_SECURITY_GROUP} of the same VPC, which CloudFront creates there with the VPC origin and puts on the network interfaces it connects from. The ${look(RESOURCES.vpcOriginsSecurityGroupLookup)} found that group's id at deployment: if the rule is missing, or names a group that no longer exists (CloudFront made the group anew, with a new id, after every VPC origin in the VPC was deleted), deploy again. If the rule admits ${VPC_ORIGINS_SECURITY_GROUP}: the tasks of the ${look(RESOURCES.gitService)} did not answer within the origin's read timeout`;
    case 502:
      return `CloudFront could not reach or read ${origin}: look at the VPC origin's status (Deployed) and the load balancer's listener on port 80`;
    case 503:
      return `the load balancer has no healthy task: look at the ${look(RESOURCES.gitService)} (running tasks), the health checks of the ${look(RESOURCES.targetGroup)} and the ${look(RESOURCES.gitLogs)}`;
    default:
      break;
  }
  if (answer.status >= 300 && answer.status < 400)
    return 'give the URL it redirects to (output WebUrl, https)';
  if (fromCloudFront(answer))
    return `CloudFront answered itself: look at the ${look(RESOURCES.distribution)} (a 403 is its web ACL)`;
  if (answer.status >= 500) return `the Git front end failed: look at the ${look(RESOURCES.gitLogs)}`;
  return `this is not the Git front end's answer: the ${look(RESOURCES.distribution)} must send ${pathPattern(INFO_REFS)} (and the other Git paths) to the ${look(RESOURCES.vpcOrigin)}, not to its default behaviour (the API)`;
}

/**
 * Git's `info/refs` through the distribution's Git behaviour, as `git clone` starts. With a
 * repository, it must answer with its ref advertisement; without one, a repository that does not
 * exist must get Git's own 401 or 404 from the front end, which proves the way there just as well.
 * The token, when given, goes as Basic credentials, as git sends it.
 */
export const gitCheck: Check = async (target) => {
  const repo = target.repo ?? ABSENT;
  const url = urlOf(target, INFO_REFS, { owner: repo.owner, repo: `${repo.name}.git` });
  url.searchParams.set('service', 'git-upload-pack');
  const headers: Record<string, string> =
    target.token === undefined
      ? {}
      : { Authorization: `Basic ${Buffer.from(`${target.token}:x-oauth-basic`).toString('base64')}` };
  const result = await probe(url, headers, target.timeoutMs);
  const asked = `GET /${repo.owner}/${repo.name}.git/info/refs`;
  if (!result.answered) {
    return fail(
      'git',
      `${asked}: ${result.reason}: look at the ${named(RESOURCES.distribution, target.stackName)} (CloudFront itself answers 504 within about 30 s when it cannot reach the Git front end)`,
    );
  }
  const got = `${asked} answered ${summary(result)}`;
  if (result.status === 200 && result.headers.get('content-type') === ADVERTISEMENT) {
    return pass('git', `${asked}: the ref advertisement`);
  }
  if (isGitRefusal(result)) {
    return target.repo === undefined
      ? pass('git', `${asked} (no such repository): ${result.status} from the Git front end`)
      : fail(
          'git',
          `${got}, from the Git front end: no such repository, or a private one that needs a token with repo scope (--token)`,
        );
  }
  return fail('git', `${got}: ${diagnosis(result, target)}`);
};
