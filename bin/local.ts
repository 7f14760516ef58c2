/**
 * `npm start`: the whole service on 127.0.0.1. Options: PORT (default 3000), `--in-memory` to keep
 * nothing between runs. Ctrl-C stops everything it started.
 */
import { startLocalStack } from '#local/stack';

// Locally we run Node 20; the Lambda runtime is Node 22, so the SDK's Node 20 notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const started = Date.now();
const inMemory = process.argv.includes('--in-memory') || process.env.LOCAL_IN_MEMORY === '1';
const stack = await startLocalStack({
  port: Number(process.env.PORT ?? 3000),
  persistent: !inMemory,
  writeEndpointsFile: true,
});

console.log(
  [
    `REST API:  ${stack.baseUrl}`,
    `Web pages: ${stack.webUrl}`,
    `Git:       ${stack.webUrl}/<owner>/<repo>.git (forwarded to the Git front end at ${stack.gitFrontendUrl})`,
    `DynamoDB Local: ${stack.dynamodbEndpoint} (table ${stack.tableName}${inMemory ? ', in memory' : ', data in .data/'})`,
    `Step Functions: ${stack.stepFunctionsEndpoint}`,
    `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. Press Ctrl-C to stop.`,
  ].join('\n'),
);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
