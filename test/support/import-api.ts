/** The source import API's preview media type (GitHub's `barred-rock` preview). */
export const IMPORT_PREVIEW = 'application/vnd.github.barred-rock-preview';

/**
 * One call of the REST API as an import client makes it: a token, the preview media type, a JSON
 * body; the answer's status, headers and parsed JSON body (undefined when empty).
 */
export async function importApiCall(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `token ${token}`, Accept: IMPORT_PREVIEW },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}
