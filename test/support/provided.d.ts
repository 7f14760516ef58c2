import 'vitest';

/** Values the global setups (`global-setup.ts`, `infra-setup.ts`) hand to test files through `inject()`. */
declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>` of the run's one in-memory DynamoDB Local. */
    dynamodbEndpoint: string;
    /** The cloud assembly `cdk synth` wrote once for the infra project (`infra-setup.ts`). */
    cdkOut: string;
    /** A key and certificate for https on 127.0.0.1 that the e2e workers trust (`loopback-ca-setup.ts`). */
    loopbackTls: { key: string; cert: string };
  }
}
