/**
 * The `purpose` of each kind of sealed secret (`SealContext.purpose`): the KMS encryption context
 * key `purpose`, which IAM conditions in `lib/cdk` match, so a function may open only the secrets
 * its job needs. A service sealing a new kind of secret adds its purpose here.
 */
export const SEAL_PURPOSE = {
  /** TOTP seeds (`services/sign-in.ts`). */
  totp: 'totp',
  /** An import's origin credentials: sealed by the API, opened by the Git workers. */
  importCredentials: 'import-credentials',
  /** A webhook's secret: sealed by the API, opened by the delivery function to sign. */
  webhookSecret: 'webhook-secret',
} as const;
