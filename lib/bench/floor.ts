import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClientOf } from '#data/client';
import { localDynamoDbClient } from '#local/dynamodb-local';

/** What a floor answers: a status (200 unless said), headers besides its Content-Type, and a JSON body. */
export interface FloorAnswer {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** The text of a request's body. */
export async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text;
}

/**
 * A floor: a bare `node:http` server in the bench process, with its own DocumentClient (built as
 * `db()` builds its own, by `documentClientOf`) on the
 * stack's DynamoDB Local, whose `answer` does the least a route must do (its DynamoDB calls) and
 * nothing else the service does. A failure answers 500 with its words, which fails the load run.
 */
export async function startFloor(
  dynamodbEndpoint: string,
  path: string,
  answer: (client: DynamoDBDocumentClient, request: IncomingMessage) => Promise<FloorAnswer>,
): Promise<{ url: string; client: DynamoDBDocumentClient; stop(): Promise<void> }> {
  const client = documentClientOf(localDynamoDbClient(dynamodbEndpoint));
  const server: Server = createServer(async (request, response) => {
    try {
      const { status = 200, headers, body } = await answer(client, request);
      response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(body));
    } catch (error) {
      response.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify({ message: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    client,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      client.destroy();
    },
  };
}
