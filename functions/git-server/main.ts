/**
 * The Git front end's process (`node /var/task/git-server.mjs` in the worker image's container):
 * listens on `PORT` (8080) at `LISTEN_ADDRESS` (0.0.0.0), with the configuration the handlers read
 * (`#shared/config`), and on SIGTERM lets requests under way finish before it exits.
 */
import { config } from '#shared/config';
import { log } from '#shared/log';
import { startGitServer } from './server.ts';

/**
 * After SIGTERM, requests under way get this long before their connections are closed: within
 * the task's `stopTimeout` (120 s, lib/cdk; ECS then sends SIGKILL), after the load balancer's
 * draining has let most of them finish.
 */
const STOP_GRACE_MS = 110_000;

// A misconfigured task fails here, at start, rather than on its first request.
config();
const server = await startGitServer({
  port: Number(process.env.PORT || 8080),
  host: process.env.LISTEN_ADDRESS || '0.0.0.0',
});
log('info', 'git front end listening', { port: server.port });

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  server.stop(STOP_GRACE_MS).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
