import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/** An API Gateway proxy event as the Fetch `Request` the SDK's web-standard transport reads. */
export function fetchRequest(event: APIGatewayProxyEvent, webUrl: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (value !== undefined) headers.set(name, value);
  const hasBody = event.body !== null && event.body !== undefined && event.httpMethod !== 'GET';
  return new Request(`${webUrl.replace(/\/$/, '')}${event.path}`, {
    method: event.httpMethod,
    headers,
    ...(hasBody ? { body: Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8') } : {}),
  });
}

/** The transport's `Response` as the proxy result API Gateway sends on (JSON mode: never a stream). */
export async function proxyResult(response: Response): Promise<APIGatewayProxyResult> {
  return {
    statusCode: response.status,
    headers: { ...Object.fromEntries(response.headers.entries()), 'Cache-Control': 'no-store' },
    body: await response.text(),
  };
}
