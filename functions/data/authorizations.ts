/**
 * The authorizations aggregate's repository (authorizations, their token lookups, uniqueness
 * pointers, grants and grant generations). Each job lives in its own module; this is the face
 * the services import.
 */
export {
  type AuthorizationChanges,
  deleteAuthorization,
  deleteGrant,
  resetToken,
  type UpdateResult,
  updateAuthorization,
} from './authorization-change.ts';
export {
  type CreateResult,
  createAuthorization,
  type GetOrCreateResult,
  getOrCreateAuthorization,
  type NewAuthorization,
} from './authorization-create.ts';
export {
  getAuthorization,
  getGrantGeneration,
  readUserAuthState,
  type UserAuthState,
} from './authorization-state.ts';
export {
  getAppAndToken,
  lookupAppToken,
  lookupToken,
  recordTokenUse,
  type TokenLookup,
} from './token-lookup.ts';
