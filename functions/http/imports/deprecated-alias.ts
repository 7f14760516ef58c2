import { validationFailed } from '#shared/errors';

/**
 * A boolean field that also arrives under a deprecated name (decision 0150: `keep_deleted_refs`
 * named two settings with two defaults). Either name sets it; both with the same value is that
 * value; both with different values is 422 on the deprecated one, before anything is written.
 */
export function aliasedBoolean(
  resource: string,
  field: string,
  value: boolean | undefined,
  alias: string,
  aliasValue: boolean | undefined,
): boolean | undefined {
  if (value !== undefined && aliasValue !== undefined && value !== aliasValue)
    throw validationFailed([
      {
        resource,
        field: alias,
        code: 'custom',
        message: `${alias} is the deprecated name of ${field}; send ${field} alone`,
      },
    ]);
  return value ?? aliasValue;
}
