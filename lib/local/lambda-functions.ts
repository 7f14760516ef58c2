/**
 * Lambda functions as Lambda runs them: each execution environment is a runtime interface client
 * (`aws-lambda-ric <handler>`) in a sandbox of a root file system (`image-sandbox.ts`), fed through
 * a Runtime API stand-in of its own (`lambda-runtime-api.ts`). A container-image function runs
 * the image's entry point and its command in the image's root; a zip function its bundle at
 * `/var/task` under the same client and Node.js major as the managed runtime. An environment runs
 * one invocation at a time and is reused while it lives; a busy function gets another one, as
 * Lambda scales. An environment whose process exits or outlives the function's timeout is
 * discarded, and its invocation fails as Lambda reports it. Each environment is held to the
 * function's memory size where this machine allows (`memory-limit.ts`): once the kernel kills a
 * process of it for memory, the environment ends and its invocation fails with
 * `Runtime.OutOfMemory`, as in Lambda.
 */
import { randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Sandbox, type SandboxOptions, startSandbox } from './image-sandbox.ts';
import type { InvocationFault } from './lambda-faults.ts';
import { FunctionError, type RuntimeApi, startRuntimeApi } from './lambda-runtime-api.ts';
import { type MemoryLimit, memoryLimit } from './memory-limit.ts';

/** Lambda's limit on an on-demand environment's init phase. */
const INIT_LIMIT_SECONDS = 10;
/** How often a busy environment's memory cgroup is looked at for a process killed over its limit. */
const MEMORY_LOOK_MS = 100;

/**
 * Lambda's REPORT line after an invocation, its memory facts: the environment's size and the most
 * it has held so far, and whether it died of memory.
 */
async function report(environment: Environment): Promise<void> {
  const { memory } = environment;
  if (!memory) return;
  const peak = memory.peakBytes() ?? environment.lastPeak;
  const used = peak === undefined ? '' : ` Max Memory Used: ${Math.ceil(peak / 1024 / 1024)} MB`;
  const status =
    environment.death?.name === 'Runtime.OutOfMemory' ? ' Status: error Error Type: Runtime.OutOfMemory' : '';
  await appendFile(environment.logFile, `REPORT Memory Size: ${memory.limitMiB} MB${used}${status}\n`).catch(
    () => undefined,
  );
}

/** What Lambda reports for an environment that reached its memory size: its runtime was killed. */
const outOfMemory = (): FunctionError =>
  new FunctionError('Runtime.OutOfMemory', 'Error: Runtime exited with error: signal: killed');

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
  /** Its memory cgroup, where this machine can make one. */
  readonly memory: MemoryLimit | undefined;
  /** The most memory it held, read before its cgroup was removed. */
  lastPeak?: number | undefined;
  busy: boolean;
  gone: boolean;
  /** How its invocation fails when it was killed on purpose (else `Runtime.ExitError`). */
  death?: FunctionError;
}

export interface LambdaFunction {
  invoke(event: unknown): Promise<unknown>;
  /** Each environment's log file, oldest first (what CloudWatch Logs would hold). */
  readonly logFiles: readonly string[];
  /** The `/tmp` of each environment still running (`Sandbox.tmpDir`), for a test to fill. */
  tmpDirs(): Promise<string[]>;
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
    const memory = memoryLimit(config.name, config.memoryMiB);
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
      ...(memory ? { cgroupProcs: memory.procsFile } : {}),
    });
    // Busy from the start: it is its caller's, and no other invocation may take it meanwhile.
    const environment: Environment = { runtime, sandbox, logFile, memory, busy: true, gone: false };
    environments.push(environment);
    void sandbox.exited.then(async (code) => {
      environment.gone = true;
      if ((memory?.oomKills() ?? 0) > 0) environment.death ??= outOfMemory();
      runtime.abort(
        environment.death ??
          new FunctionError(
            'Runtime.ExitError',
            `Runtime exited with error: exit status ${code ?? 'signal'}`,
          ),
      );
      void runtime.close();
      if (memory) {
        environment.lastPeak = memory.peakBytes();
        await memory.remove();
      }
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
      // A process of the environment killed over its memory size ends the environment, whatever
      // the function makes of its child's death: Lambda reports the invocation out of memory.
      const oomBefore = environment.memory?.oomKills() ?? 0;
      const outOfMemoryNow = () => (environment.memory?.oomKills() ?? 0) > oomBefore;
      const diedOfMemory = async () => {
        environment.death = outOfMemory();
        environment.gone = true;
        await environment.sandbox.stop();
      };
      const memoryWatch = environment.memory
        ? setInterval(() => {
            if (!over && !environment.gone && outOfMemoryNow()) void diedOfMemory();
          }, MEMORY_LOOK_MS)
        : undefined;
      try {
        if (fault?.when === 'mid-work') {
          const pid = environment.sandbox.process.pid ?? 0;
          void fault
            .moment(pid, () => over)
            .then((during) => {
              if (during !== undefined && !over) return kill(fault.error, during);
            });
        }
        const result = await environment.runtime.invoke(event, delivered).catch(async (error: unknown) => {
          if (!outOfMemoryNow()) throw error;
          await diedOfMemory();
          throw environment.death;
        });
        if (outOfMemoryNow()) {
          await diedOfMemory();
          throw environment.death;
        }
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
        clearInterval(memoryWatch);
        if (environment.memory) void report(environment);
        environment.busy = false;
      }
    },
    async tmpDirs() {
      const live = environments.filter((environment) => !environment.gone);
      const dirs = await Promise.all(live.map((environment) => environment.sandbox.tmpDir()));
      return dirs.filter((dir): dir is string => dir !== undefined);
    },
    async stop() {
      await Promise.all(environments.map((environment) => environment.sandbox.stop()));
    },
  };
}
