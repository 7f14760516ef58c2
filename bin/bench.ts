/**
 * `npm run bench [-- section ...]`: measures the service on this machine and writes the results
 * into docs/benchmarks.md. Sections:
 * - `startup`: npm start → ready;
 * - `bundles`: each Lambda bundle's size and module-load time;
 * - `tokens`, `introspect`, `device`: token-authenticated requests, introspections and device-flow
 *   polls against a one-GetItem floor;
 * - `oauth`: code exchanges under load, and the whole OAuth web flow in Chromium;
 * - `login`: password sign-in (scrypt cost and Basic-auth latency);
 * - `import`: a 10,000-commit source import, and Lua's real history run after run, against git alone;
 * - `hg`: a 2,000-changeset Mercurial import against `hg clone`;
 * - `svn`: a 1,000-revision Subversion import against `git svn clone` (the baseline alone takes
 *   about 15 minutes);
 * - `sync-git`, `sync-hg`, `sync-svn`, `sync-tfvc`: a sync of 10 new commits, changesets or
 *   revisions against the import of a 5,000-long history, alternating;
 * - `git`: a clone and a push of 1 GiB through the Git front end against plain `git http-backend`;
 * - `followpage`: the progress page of an import that follows its origin against one that does not;
 * - `events`: a status change with its import event against the write alone;
 * - `originlfs`: importing a Git origin with 50 MiB of LFS objects against `git clone` +
 *   `git lfs fetch --all`;
 * - `webhooks`: a ping and its signed delivery against a plain read and a direct POST.
 * No section named means all of them, except the opt-in ones (`OPT_IN`), which run only when named
 * (they take long):
 * - `concurrent`: 1, 5, then 20 imports of all four kinds at once (3,000 Git commits, 1,000
 *   Subversion revisions, 1,000 Mercurial changesets, 500 TFVC changesets each): commits per
 *   second, imports per hour, peak memory and disk (`BENCH_CONCURRENT_SCALE` shrinks the histories);
 * - `svn-100k`: a generated 100,000-revision Subversion history (`BENCH_SVN_REVISIONS` for
 *   fewer) imported with a dead worker in the middle, against `svnadmin load` plus
 *   `svn-all-fast-export` by hand; then a sync of 10 new revisions;
 * - `git-large`: the largest Git history the machine holds (`BENCH_GIT_GIB`, default 5) imported
 *   with a dead worker in the middle, against `git clone --mirror` plus `git push --mirror`; then a
 *   sync of 10 new commits.
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { kib, median, ms } from '#bench/measure';
import { writeSection } from '#bench/report';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const SECTIONS = [
  'startup',
  'bundles',
  'tokens',
  'introspect',
  'device',
  'oauth',
  'login',
  'import',
  'sync-git',
  'hg',
  'sync-hg',
  'svn',
  'sync-svn',
  'git',
  'sync-tfvc',
  'followpage',
  'events',
  'originlfs',
  'webhooks',
] as const;
/** Sections that run only when named (long). */
const OPT_IN = ['concurrent', 'svn-100k', 'git-large'] as const;
const wanted = new Set(process.argv.slice(2));

// Each section loads only its own modules (below, in its block): the sections that measure the
// local stack must not pay for what others load (aws-cdk-lib for \`bundles\` made every process
// the stack spawns from slower to fork).
// Each section that starts a local stack needs a process of its own (configuration is read once
// per process, as in a Lambda container): unless exactly one section is named, run each named
// section (or all) in a child process.
if (wanted.size !== 1) {
  const named = [...SECTIONS, ...OPT_IN].filter((name) => wanted.has(name));
  for (const section of wanted.size === 0 ? SECTIONS : named) {
    const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));
    const child = spawnSync(tsx, [fileURLToPath(import.meta.url), section], { stdio: 'inherit' });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
  process.exit(0);
}
const run = (section: string) => wanted.has(section);
const machine = `${cpus().length} cores, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;

if (run('startup')) {
  const { timeToReady } = await import('#bench/startup');
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) samples.push(await timeToReady());
  const markdown = [
    `Measured ${machine}: 5 starts of \`tsx bin/local.ts --in-memory\` (what \`npm start\` runs after setup), spawn → "Ready".`,
    '',
    '| median | min | max |',
    '|---|---|---|',
    `| ${ms(median(samples))} | ${ms(Math.min(...samples))} | ${ms(Math.max(...samples))} |`,
  ].join('\n');
  await writeSection('startup', markdown);
  console.log(markdown);
}

if (run('bundles')) {
  const { BUNDLE_LOAD_TARGET_MS, measureBundles } = await import('#bench/bundles');
  const { RUNTIME_ENVIRONMENT } = await import('#cdk/bundling');
  const load = loadavg()[0] ?? 0;
  const results = measureBundles(5);
  const slowest = results.reduce((a, b) => (b.loadMs > a.loadMs ? b : a));
  const over = results.filter((r) => r.loadMs > BUNDLE_LOAD_TARGET_MS);
  const markdown = [
    `Measured ${machine}: bundles as \`cdk synth\` builds them (esbuild, ESM, minified, the AWS SDK bundled: nothing left out); load = median \`import()\` time of the bundle and its source map in 5 fresh \`node\` processes with the function's \`NODE_OPTIONS\` (\`${RUNTIME_ENVIRONMENT.NODE_OPTIONS}\`); the 1-minute load average was ${load.toFixed(1)} before the bench started.`,
    '',
    '| Route | Bundle | gzip | Module load |',
    '|---|---|---|---|',
    ...results.map((r) => `| \`${r.route}\` | ${kib(r.bytes)} | ${kib(r.gzipBytes)} | ${ms(r.loadMs)} |`),
    '',
    `- Target: every bundle loads in at most ${BUNDLE_LOAD_TARGET_MS} ms: ${over.length === 0 ? 'met' : `not met by ${over.length} of ${results.length}`} (slowest: \`${slowest.route}\`, ${ms(slowest.loadMs)}).`,
  ].join('\n');
  await writeSection('bundles', markdown);
  console.log(markdown);
}

if (run('tokens')) {
  const { measureTokens, tokensReport } = await import('#bench/tokens');
  const result = await measureTokens({
    concurrency: 16,
    prewarmMs: 5_000,
    warmupMs: 2_000,
    durationMs: 10_000,
    rounds: 2,
    countedRequests: 20,
  });
  const markdown = tokensReport(result, machine);
  await writeSection('tokens', markdown);
  console.log(markdown);
}

if (run('introspect')) {
  const { introspectReport, measureIntrospect } = await import('#bench/introspect');
  const result = await measureIntrospect({
    concurrency: 16,
    prewarmMs: 5_000,
    warmupMs: 2_000,
    durationMs: 10_000,
    rounds: 2,
    countedRequests: 20,
  });
  const markdown = introspectReport(result, machine);
  await writeSection('introspect', markdown);
  console.log(markdown);
}

if (run('device')) {
  const { deviceReport, measureDevicePolls } = await import('#bench/device');
  const result = await measureDevicePolls({
    concurrency: 16,
    codes: 64,
    // DynamoDB Local's JIT keeps speeding reads up for tens of seconds, and single rounds swing by
    // ±30% on 2 cores: a longer prewarm and five rounds make the median worth reading.
    prewarmMs: 15_000,
    warmupMs: 2_000,
    durationMs: 10_000,
    rounds: 5,
    countedPolls: 20,
  });
  const markdown = deviceReport(result, machine);
  await writeSection('device', markdown);
  console.log(markdown);
}

if (run('oauth')) {
  const { measureOAuth, oauthReport } = await import('#bench/oauth');
  const result = await measureOAuth({
    codes: 400,
    rounds: 5,
    concurrency: 8,
    countedExchanges: 12,
    browserRuns: 3,
  });
  const markdown = oauthReport(result, machine);
  await writeSection('oauth', markdown);
  console.log(markdown);
}

if (run('login')) {
  const { loginReport, measureLogin } = await import('#bench/login');
  const result = await measureLogin({
    hashes: 5,
    concurrencies: [1, 4],
    warmupMs: 2_000,
    durationMs: 10_000,
  });
  const markdown = loginReport(result, machine);
  await writeSection('login', markdown);
  console.log(markdown);
}

if (run('import')) {
  const { importReport, measureImport } = await import('#bench/import');
  const options = {
    commits: 10_000,
    bytesPerCommit: 10_000,
    branches: 5,
    tags: 10,
    smallRuns: 5,
    realRuns: Number(process.env.BENCH_ROUNDS ?? 5),
    pollMs: 200,
  };
  const result = await measureImport(options);
  const markdown = importReport(result, machine, options);
  await writeSection('import', markdown);
  console.log(markdown);
}

if (run('sync-git')) {
  const { measureSyncGit, syncGitReport } = await import('#bench/sync-git');
  const options = {
    commits: 5_000,
    bytesPerCommit: 2_000,
    newCommits: 10,
    rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  };
  const result = await measureSyncGit(options);
  const markdown = syncGitReport(result, machine, options);
  await writeSection('sync-git', markdown);
  console.log(markdown);
}

if (run('hg')) {
  const { hgImportReport, measureHgImport } = await import('#bench/import-hg');
  const options = { revisions: 2000, branchRevisions: 500, runs: 3 };
  const result = await measureHgImport(options);
  const markdown = hgImportReport(result, machine, options);
  await writeSection('import-hg', markdown);
  console.log(markdown);
}

if (run('sync-hg')) {
  const { hgSyncReport, measureHgSync } = await import('#bench/sync-hg');
  const options = { revisions: 5000, branchRevisions: 500, newRevisions: 10, rounds: 3 };
  const result = await measureHgSync(options);
  const markdown = hgSyncReport(result, machine, options);
  await writeSection('sync-hg', markdown);
  console.log(markdown);
}

if (run('svn')) {
  const { measureSvn, svnReport } = await import('#bench/svn');
  const options = {
    revisions: 1_000,
    branches: 4,
    tags: 10,
    files: 120,
    authors: ['ada', 'bob', 'carl', 'dora', 'emil'],
  };
  const result = await measureSvn(options);
  const markdown = svnReport(result, machine, options);
  await writeSection('svn', markdown);
  console.log(markdown);
}

if (run('sync-svn')) {
  const { measureSyncSvn, syncSvnReport } = await import('#bench/sync-svn');
  const options = {
    revisions: 5_000,
    branches: 4,
    tags: 10,
    files: 60,
    authors: ['ada', 'bob', 'carl', 'dora', 'emil'],
    rounds: 2,
    added: 10,
  };
  const result = await measureSyncSvn(options);
  const markdown = syncSvnReport(result, machine, options);
  await writeSection('sync-svn', markdown);
  console.log(markdown);
}

if (run('git')) {
  const { gitReport, measureGit } = await import('#bench/git');
  const markdown = gitReport(await measureGit(), machine);
  await writeSection('git', markdown);
  console.log(markdown);
}

if (run('sync-tfvc')) {
  const { measureSyncTfvc, syncTfvcReport } = await import('#bench/sync-tfvc');
  const options = { changesets: 5_000, added: 10, files: 100, rounds: 3 };
  const result = await measureSyncTfvc(options);
  const markdown = syncTfvcReport(result, machine, options);
  await writeSection('sync-tfvc', markdown);
  console.log(markdown);
}

if (run('followpage')) {
  const { followPageReport, measureFollowPage } = await import('#bench/followpage');
  const markdown = followPageReport(await measureFollowPage(200), machine);
  await writeSection('followpage', markdown);
  console.log(markdown);
}

if (run('events')) {
  const { eventsReport, measureEvents } = await import('#bench/events');
  const markdown = eventsReport(await measureEvents(200), machine);
  await writeSection('events', markdown);
  console.log(markdown);
}

if (run('originlfs')) {
  const { measureOriginLfs, originLfsReport } = await import('#bench/originlfs');
  const options = { objects: 200, objectBytes: 256 * 1024, rounds: 3 };
  const markdown = originLfsReport(await measureOriginLfs(options), machine, options);
  await writeSection('originlfs', markdown);
  console.log(markdown);
}

if (run('webhooks')) {
  const { measureWebhooks, webhooksReport } = await import('#bench/webhooks');
  const markdown = webhooksReport(await measureWebhooks(100), machine);
  await writeSection('webhooks', markdown);
  console.log(markdown);
}

if (run('concurrent')) {
  const { concurrentReport, measureConcurrent } = await import('#bench/concurrent');
  const scale = Number(process.env.BENCH_CONCURRENT_SCALE ?? 1);
  const options = {
    levels: [1, 5, 20],
    gitCommits: Math.round(3_000 * scale),
    svnRevisions: Math.round(1_000 * scale),
    hgRevisions: Math.round(1_000 * scale),
    tfvcChangesets: Math.round(500 * scale),
  };
  const markdown = concurrentReport(await measureConcurrent(options), machine, options);
  await writeSection('concurrent', markdown).catch((error: unknown) => console.error(String(error)));
  console.log(markdown);
}

if (run('svn-100k')) {
  const { measureSvnLarge, svnLargeReport } = await import('#bench/svn-large');
  const options = {
    revisions: Number(process.env.BENCH_SVN_REVISIONS ?? 100_000),
    branches: 40,
    tags: 200,
    files: 400,
    authors: Array.from({ length: 300 }, (_, i) => `dev${String(i + 1).padStart(3, '0')}`),
    added: 10,
    deathAfterMs: Number(process.env.BENCH_DEATH_AFTER_MS ?? 3_000),
  };
  const markdown = svnLargeReport(await measureSvnLarge(options), machine, options);
  console.log(markdown);
  await writeSection('svn-100k', markdown);
}

if (run('git-large')) {
  const { gitLargeReport, measureGitLarge } = await import('#bench/git-large');
  const bytes = Math.round(Number(process.env.BENCH_GIT_GIB ?? 5) * 2 ** 30);
  const options = {
    bytes,
    commits: Math.max(100, Math.round(bytes / (1 << 20))),
    added: 10,
    deathAfterMs: Number(process.env.BENCH_DEATH_AFTER_MS ?? 3_000),
  };
  const markdown = gitLargeReport(await measureGitLarge(options), machine, options);
  console.log(markdown);
  await writeSection('git-large', markdown);
}
