import 'vitest';

/** Values the global setup (`global-setup.ts`) hands to test files through `inject()`. */
declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>` of the run's one in-memory DynamoDB Local. */
    dynamodbEndpoint: string;
  }
}
