import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * GitHub's own OpenAPI description of api.github.com (npm `@octokit/openapi` 2.2.1, the last
 * version that still describes `/authorizations`, the app-side token endpoints and the source
 * import endpoints), turned into JSON Schema for ajv, so tests can check a response against the
 * schema GitHub publishes for its operation.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Description {
  paths: Record<string, Record<string, { responses: Record<string, JsonObject> }>>;
  components: { schemas: JsonObject; responses: Record<string, JsonObject> };
}

const require = createRequire(import.meta.url);
const description = require('@octokit/openapi/generated/api.github.com.json') as Description;

const DOC_ID = 'https://api.github.com/openapi';

/**
 * OpenAPI 3.0 schema → JSON Schema: `nullable: true` becomes "null or the schema" (also around
 * `allOf`/`$ref`/`enum`, where a `type` list would not do), and local `$ref`s point into the
 * document registered under DOC_ID.
 */
function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' && typeof value === 'boolean') continue;
    if (key === 'example' || key === 'examples') continue;
    out[key] = key === '$ref' && typeof value === 'string' ? `${DOC_ID}${value}` : toJsonSchema(value);
  }
  return node.nullable === true ? { anyOf: [{ type: 'null' }, out] } : out;
}

// ajv-formats is CommonJS with a default export; under ESM the function may sit on `.default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

// strict off: the description uses OpenAPI-only keywords (`discriminator`, `readOnly` notes, …).
const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
addFormats(ajv);
ajv.addSchema({ $id: DOC_ID, components: { schemas: toJsonSchema(description.components.schemas) } });

/**
 * The shared error responses GitHub sends from every operation. The description lists only some
 * statuses per operation (e.g. no 404 on `GET /authorizations/{authorization_id}`), but GitHub
 * answers them all with these bodies, so an undeclared error status is checked against these.
 */
const SHARED_ERRORS: Record<string, string> = {
  '400': 'bad_request',
  '401': 'requires_authentication',
  '403': 'forbidden',
  '404': 'not_found',
  '409': 'conflict',
  '422': 'validation_failed',
};

/** `/users/{login}` and `/users/{username}` are the same operation: compare paths without names. */
const shapeOf = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

/** The described JSON schema for a response, or `undefined` when the operation has no body for it. */
export function responseSchema(
  method: string,
  path: string,
  status: number,
): { operation: string; schema: Json | undefined } {
  const entry = Object.entries(description.paths).find(([candidate]) => shapeOf(candidate) === shapeOf(path));
  const operation = entry?.[1][method.toLowerCase()] as
    | { operationId: string; responses: Record<string, JsonObject> }
    | undefined;
  if (!operation) throw new Error(`GitHub's description has no operation ${method} ${path}`);
  let response: JsonObject | undefined = operation.responses[String(status)];
  if (!response) {
    const shared = SHARED_ERRORS[String(status)];
    if (!shared) throw new Error(`${operation.operationId} does not describe status ${status}`);
    response = { $ref: `#/components/responses/${shared}` };
  }
  const ref = response.$ref;
  if (typeof ref === 'string') response = description.components.responses[ref.split('/').pop() ?? ''];
  const content = response?.content as Record<string, { schema?: Json }> | undefined;
  return { operation: operation.operationId, schema: content?.['application/json']?.schema };
}

const compiled = new Map<string, ValidateFunction>();

const describeError = (error: ErrorObject): string =>
  `${error.instancePath || '(root)'} ${error.message ?? ''}${
    error.keyword === 'additionalProperties'
      ? ` (${String((error.params as { additionalProperty: string }).additionalProperty)})`
      : ''
  }`;

/**
 * For a body that carries some of the described fields (the API root's templates for the
 * resources the service has): none is required, every one sent must match its description. The
 * root's `format: uri` fields are URI templates in GitHub's own answer (`…{/client_id}`), so they
 * are checked as such.
 */
function asSubset(schema: Json | undefined): Json | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const properties = (schema.properties ?? {}) as JsonObject;
  return {
    ...schema,
    required: [],
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [
        name,
        property !== null &&
        typeof property === 'object' &&
        !Array.isArray(property) &&
        property.format === 'uri'
          ? { ...property, format: 'uri-template' }
          : property,
      ]),
    ),
  };
}

/**
 * Checks one response body against its operation's schema; returns the deviations as readable
 * lines (empty when it conforms).
 */
export function deviationsFrom(
  method: string,
  path: string,
  status: number,
  body: unknown,
  options: { readonly subset?: boolean } = {},
): string[] {
  const described = responseSchema(method, path, status);
  const { operation } = described;
  const schema = options.subset ? asSubset(described.schema) : described.schema;
  const label = `${method} ${path} → ${status} (${operation})`;
  if (schema === undefined)
    return body === undefined ? [] : [`${label}: the description has no body, the service sent one`];
  if (body === undefined) return [`${label}: no JSON body`];
  const key = `${method} ${path} ${status}${options.subset ? ' subset' : ''}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(toJsonSchema(schema) as object);
    compiled.set(key, validate);
  }
  if (validate(body)) return [];
  // oneOf over several schemas repeats each branch's errors; one line per distinct complaint.
  return [...new Set((validate.errors ?? []).map(describeError))].map((line) => `${label}: ${line}`);
}
