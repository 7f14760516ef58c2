import * as z from 'zod/mini';

/** Body fields shared by the authorization routes' schemas (GitHub accepts null for optional ones). */
export const optionalText = (max: number) => z.optional(z.nullable(z.string().check(z.maxLength(max))));
export const scopeList = z.optional(
  z.nullable(z.array(z.string().check(z.maxLength(100))).check(z.maxLength(100))),
);
export const RESOURCE = 'OauthAccess';

/** `:authorization_id` as an integer, or undefined for anything else (then the route answers 404). */
export function idParam(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}
