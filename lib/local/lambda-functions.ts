/**
 * Lambda functions as Lambda runs them: each execution environment is a runtime interface client
 * (`aws-lambda-ric <handler>`) in a sandbox of a root file system (`image-sandbox.ts`), fed through
 * a Runtime API stand-in of its own (`lambda-runtime-api.ts`). A container-image function runs
 * the image's entry point and its command in the image's root; a zip function its bundle at
 * `/var/task` under the same client and Node.js major as the managed runtime. An environment runs
 * one invocation at a time and is reused while it lives; a busy function gets another one, as
 * Lambda scales. An environment whose process exits or outlives the function's timeout is
 * discarded, and its invocation fails as Lambda reports it. The memory size is only reported
 * (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`), not enforced.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type Sandbox, type SandboxOptions, startSandbox } from './image-sandbox.ts';
import type { InvocationFault } from './lambda-faults.ts';
import { FunctionError, type RuntimeApi, startRuntimeApi } from './lambda-runtime-api.ts';

/** Lambda's limit on an on-demand environment's init phase. */
const INIT_LIMIT_SECONDS = 10;

export interface LambdaFunctionConfig {
  /** The function's name (`AWS_LAMBDA_FUNCTION_NAME`). */
  readonly name: string;
  /** The runtime interface client and the handler (an image's entry point and command). */
  readonly argv: readonly string[];
  readonly timeoutSeconds: number;
  readonly memoryMiB: number;
  /** The function's environment; the variables Lambda itself sets from this config are added. */
  readonly env: Readonly<Record<string, string>>;
  /** Where the environment runs: the image's root, its mounts and user. */
  readonly sandbox: Omit<SandboxOptions, 'env' | 'argv' | 'logFile'>;
  /** A directory for each environment's output (`<name>-<n>.log`). */
  readonly logDir: string;
  /** The death a test wants for an invocation, if any (`lambda-faults.ts`); none without it. */
  readonly faults?: (event: unknown) => InvocationFault | undefined;
}

interface Environment {
  readonly runtime: RuntimeApi;
  readonly sandbox: Sandbox;
  readonly logFile: string;
  busy: boolean;
  gone: boolean;
  /** How its invocation fails when it was killed on purpose (else `Runtime.ExitError`). */
  death?: FunctionError;
}

export interface LambdaFunction {
  invoke(event: unknown): Promise<unknown>;
  /** Each environment's log file, oldest first (what CloudWatch Logs would hold). */
  readonly logFiles: readonly string[];
  stop(): Promise<void>;
}

export function lambdaFunction(config: LambdaFunctionConfig): LambdaFunction {
  const environments: Environment[] = [];
  const logFiles: string[] = [];

  async function start(): Promise<Environment> {
    const arn = `arn:aws:lambda:${config.env.AWS_REGION ?? 'us-east-1'}:123456789012:function:${config.name}`;
    const runtime = await startRuntimeApi({ functionArn: arn, timeoutMs: config.timeoutSeconds * 1000 });
    const logFile = join(config.logDir, `${config.name}-${logFiles.length + 1}.log`);
    logFiles.push(logFile);
    const sandbox = await startSandbox({
      ...config.sandbox,
      env: {
        ...config.env,
        AWS_LAMBDA_FUNCTION_NAME: config.name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(config.memoryMiB),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${config.name}`,
        AWS_LAMBDA_RUNTIME_API: runtime.address,
        AWS_LAMBDA_LOG_STREAM_NAME: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
      },
      argv: config.argv,
      logFile,
    });
    // Busy from the start: it is its caller's, and no other invocation may take it meanwhile.
    const environment: Environment = { runtime, sandbox, logFile, busy: true, gone: false };
    environments.push(environment);
    void sandbox.exited.then((code) => {
      environment.gone = true;
      runtime.abort(
        environment.death ??
          new FunctionError(
            'Runtime.ExitError',
            `Runtime exited with error: exit status ${code ?? 'signal'}`,
          ),
      );
      void runtime.close();
    });
    return environment;
  }

  return {
    logFiles,
    async invoke(event) {
      const environment = environments.find((known) => !known.busy && !known.gone) ?? (await start());
      environment.busy = true;
      const timedOut = () => {
        environment.gone = true;
        environment.runtime.abort(
          new FunctionError(
            'Sandbox.Timedout',
            `Task timed out after ${config.timeoutSeconds.toFixed(2)} seconds`,
          ),
        );
        void environment.sandbox.stop();
      };
      // The timeout counts from the event's delivery, as Lambda's invoke phase does; a new
      // environment's init first has Lambda's init limit (then, in Lambda, runs again inside the
      // invoke phase). Twenty cold starts on two shared cores take longer than ten seconds here,
      // where each would have its own CPU in Lambda.
      let timer = setTimeout(timedOut, (INIT_LIMIT_SECONDS + config.timeoutSeconds) * 1000);
      const delivered = () => {
        clearTimeout(timer);
        timer = setTimeout(timedOut, config.timeoutSeconds * 1000);
      };
      const fault = config.faults?.(event);
      let over = false;
      const kill = async (error: FunctionError, during: string) => {
        environment.death = error;
        environment.gone = true;
        await environment.sandbox.stop();
        fault?.died(during);
      };
      try {
        if (fault?.when === 'mid-work') {
          const pid = environment.sandbox.process.pid ?? 0;
          void fault
            .moment(pid, () => over)
            .then((during) => {
              if (during !== undefined && !over) return kill(fault.error, during);
            });
        }
        const result = await environment.runtime.invoke(event, delivered);
        if (fault?.when === 'after-response') {
          await kill(fault.error, 'after its response');
          throw fault.error;
        }
        if (fault?.when === 'mid-work') {
          // Its moment never came while it ran (the process it waits for came and went between two
          // looks): it still dies, once its work is done, and its answer is lost.
          fault.missed('the invocation ended before its moment came');
          await kill(fault.error, 'after its response (its moment did not come while it ran)');
          throw fault.error;
        }
        return result;
      } finally {
        over = true;
        clearTimeout(timer);
        environment.busy = false;
      }
    },
    async stop() {
      await Promise.all(environments.map((environment) => environment.sandbox.stop()));
    },
  };
}
