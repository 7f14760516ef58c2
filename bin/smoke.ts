/**
 * `npm run smoke -- <web origin> [--token <t>] [--repo <owner>/<name>] [--stack <name>] [--timeout <s>]`:
 * the post-deploy smoke check (lib/smoke). Prints one line per check; exits 1 when one fails, 2 on
 * a usage error. The token may come from SMOKE_TOKEN instead, which keeps it out of `ps`.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_SETTINGS } from '#cdk/settings';
import type { SmokeTarget } from '#smoke/check';
import { formatResult, runSmoke } from '#smoke/run';

const USAGE =
  'usage: npm run smoke -- <web origin, e.g. https://d111111abcdef8.cloudfront.net> [--token <token>] [--repo <owner>/<name>] [--stack <name>] [--timeout <seconds>]';

/**
 * Above CloudFront's three connection attempts of 10 s each, so that a Git front end it cannot
 * reach shows as CloudFront's 504 (which says what is wrong) rather than as this check's timeout.
 */
const DEFAULT_TIMEOUT_SECONDS = 45;

function targetOf(argv: readonly string[]): SmokeTarget {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      token: { type: 'string' },
      repo: { type: 'string' },
      stack: { type: 'string' },
      timeout: { type: 'string' },
    },
  });
  const [origin, ...rest] = positionals;
  if (origin === undefined || rest.length > 0) throw new Error('give exactly one URL');
  const url = new URL(origin);
  // The origin alone: clients and the OAuth metadata know the service by it (output WebUrl).
  if (url.pathname !== '/' || url.search !== '')
    throw new Error(`give the web origin without a path: ${url.origin}`);
  const [owner, name, ...extra] = values.repo?.split('/') ?? [];
  if (values.repo !== undefined && (!owner || !name || extra.length > 0))
    throw new Error('--repo is <owner>/<name>');
  const seconds = Number(values.timeout ?? DEFAULT_TIMEOUT_SECONDS);
  if (!(seconds > 0)) throw new Error('--timeout is a number of seconds');
  const token = values.token ?? process.env.SMOKE_TOKEN;
  return {
    origin: url.origin,
    stackName: values.stack ?? DEFAULT_SETTINGS.stackName,
    timeoutMs: seconds * 1000,
    ...(token ? { token } : {}),
    ...(owner && name ? { repo: { owner, name: name.replace(/\.git$/, '') } } : {}),
  };
}

let target: SmokeTarget;
try {
  target = targetOf(process.argv.slice(2));
} catch (error) {
  console.error(`smoke: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const results = await runSmoke(target);
for (const result of results) console.log(formatResult(result));
process.exit(results.some((result) => result.outcome === 'fail') ? 1 : 0);
