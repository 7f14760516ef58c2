import * as z from 'zod/mini';
import { PATH_PARAMETERS, pathParameterNames, type Route } from '#shared/routes';
import { type FieldError, validationFailed } from './errors.ts';

/**
 * Checks a parsed JSON body against a route's schema and returns the typed value. Failures become
 * GitHub's 422 `Validation Failed` with one `errors[]` entry per field: `missing_field` when the
 * field is absent, `custom` with the schema's message when it gave one, `invalid` otherwise.
 */
export function validateBody<T>(schema: z.ZodMiniType<T>, resource: string, body: unknown): T {
  const result = z.safeParse(schema, body);
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    const value = issue.path.reduce<unknown>(
      (node, part) =>
        node !== null && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[part] : undefined,
      body,
    );
    if (value === undefined && issue.code === 'invalid_type')
      return { resource, field, code: 'missing_field' };
    if (issue.code === 'custom') return { resource, field, code: 'custom', message: issue.message };
    return { resource, field, code: 'invalid' };
  });
  throw validationFailed(errors);
}

/** Whether `value` passes the route table's rule for the path parameter `name` (none: it does not). */
export function matchesParamRule(name: string, value: string | undefined): boolean {
  const rule = PATH_PARAMETERS[name];
  if (!rule || value === undefined || !rule.pattern.test(value)) return false;
  return !rule.safeInteger || Number.isSafeInteger(Number(value));
}

/** Whether every `{param}` of the route's path has a value that passes its rule. */
export function pathParametersValid(
  route: Pick<Route, 'path'>,
  params: Readonly<Record<string, string | undefined>> | null | undefined,
): boolean {
  return pathParameterNames(route.path).every((name) => matchesParamRule(name, params?.[name]));
}
