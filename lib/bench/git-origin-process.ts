/**
 * `tsx lib/bench/git-origin-process.ts <root>`: the repositories under `root` served by smart HTTP
 * (`serveGitHttp`) from a Node process of its own, whose address is the first line it prints; it
 * stops on SIGTERM. A benchmark's origin stands for another machine: its `git http-backend` forks
 * must not be paid by the process that runs the measured service.
 */
import { serveGitHttp } from '#local/git-origins';

const root = process.argv[2];
if (!root) throw new Error('usage: git-origin-process.ts <root>');
const server = await serveGitHttp(root);
process.stdout.write(`${server.url}\n`);
process.on('SIGTERM', () => {
  server.close().then(() => process.exit(0));
});
