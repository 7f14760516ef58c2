import {
  GetExecutionHistoryCommand,
  type HistoryEvent,
  SFNClient,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { createUser, personalToken } from './fixtures.ts';
import { gitClient, remoteRefs } from './git-client.ts';
import { importApiCall } from './import-api.ts';

/**
 * An import as a client drives it in the resume and continuation tests: start, wait for a status,
 * read what the API shows (revision map, authors, report), and count the rounds of each step in an
 * execution's history (the Step Functions API, as the console shows it).
 */
export interface ImportRuns {
  api(method: string, path: string, body?: unknown): ReturnType<typeof importApiCall>;
  /** Polls the import until `done` (or an end it cannot leave), returns the last body. */
  until(
    repo: string,
    done: (body: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Every page of a list of the import (`/import/revisions`, `/import/authors`). */
  all(path: string): Promise<Record<string, unknown>[]>;
  /** The execution's whole history. */
  history(executionName: string): Promise<HistoryEvent[]>;
  /** How many times the execution entered `state`, and how many of its function calls succeeded. */
  rounds(executionName: string, state: string): Promise<{ entered: number; succeeded: number }>;
  /**
   * What a client can read of a finished import of `owner/repo`, without the ids and URLs that
   * name this import: the hosted refs (`git ls-remote` at `webUrl`), revision map, authors, report.
   */
  outcome(repo: string, webUrl: string): Promise<Record<string, unknown>>;
  /** Creates `octocat/<repo>` and starts its import with `body` (throws unless both succeed). */
  start(repo: string, body: Record<string, string>): Promise<void>;
  /** Stops an execution through the Step Functions API, as the console does. */
  stop(executionName: string, cause: string): Promise<void>;
}

/** A new user `octocat` of the stack, and its import runs (a token with `repo`). */
export async function octocatRuns(stack: {
  endpointsFile: string;
  baseUrl: string;
  stepFunctionsEndpoint: string;
}): Promise<ImportRuns> {
  const user = await createUser(stack.endpointsFile, 'octocat');
  const token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  return importRuns(stack.baseUrl, token, stack.stepFunctionsEndpoint);
}

const EXECUTIONS = 'arn:aws:states:us-east-1:123456789012:execution:SourceImport:';

const ENDS = new Set(['complete', 'error', 'auth_failed', 'detection_found_nothing']);

export function importRuns(baseUrl: string, token: string, stepFunctionsEndpoint: string): ImportRuns {
  const api = (method: string, path: string, body?: unknown) =>
    importApiCall(baseUrl, token, method, path, body);
  const sfn = new SFNClient({
    endpoint: stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const history = async (executionName: string) => {
    const events: HistoryEvent[] = [];
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(
        new GetExecutionHistoryCommand({
          executionArn: `${EXECUTIONS}${executionName}`,
          maxResults: 1000,
          ...(nextToken ? { nextToken } : {}),
        }),
      );
      events.push(...(page.events ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
    return events;
  };
  return {
    api,
    async until(repo, done, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      let last: Record<string, unknown> = {};
      while (Date.now() < deadline) {
        last = (await api('GET', `/repos/${repo}/import`)).body;
        if (done(last)) return last;
        if (ENDS.has(String(last.status))) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`the import did not get there: ${JSON.stringify(last)}`);
    },
    async all(path) {
      const items: Record<string, unknown>[] = [];
      for (let page = 1; ; page++) {
        const { body } = await api(
          'GET',
          `${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`,
        );
        const list = body as Record<string, unknown>[];
        items.push(...list);
        if (list.length < 100) return items;
      }
    },
    history,
    async rounds(executionName, state) {
      const events = await history(executionName);
      let entered = 0;
      let succeeded = 0;
      let inState = false;
      for (const event of events) {
        if (event.type === 'TaskStateEntered') {
          inState = event.stateEnteredEventDetails?.name === state;
          if (inState) entered++;
        }
        if (inState && event.type === 'LambdaFunctionSucceeded') succeeded++;
        if (event.type === 'TaskStateExited') inState = false;
      }
      return { entered, succeeded };
    },
    async start(repo, body) {
      const created = await api('POST', '/user/repos', { name: repo });
      if (created.status !== 201) throw new Error(`repository ${repo}: ${created.status}`);
      const started = await api('PUT', `/repos/octocat/${repo}/import`, body);
      if (started.status !== 201) throw new Error(`import ${repo}: ${JSON.stringify(started.body)}`);
    },
    async stop(executionName, cause) {
      await sfn.send(new StopExecutionCommand({ executionArn: `${EXECUTIONS}${executionName}`, cause }));
    },
    async outcome(repo, webUrl) {
      const authors = (await this.all(`/repos/${repo}/import/authors`)).map(
        ({ remote_id, remote_name, email, name }) => ({ remote_id, remote_name, email, name }),
      );
      const report = (await api('GET', `/repos/${repo}/import/report`)).body;
      const record = (await api('GET', `/repos/${repo}/import`)).body;
      return {
        refs: await remoteRefs(await gitClient(), `${webUrl}/${repo}.git`),
        revisions: await this.all(`/repos/${repo}/import/revisions`),
        authors,
        authorsCount: record.authors_count,
        commitCount: record.commit_count ?? null,
        report,
      };
    },
  };
}
