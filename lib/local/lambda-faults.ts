/**
 * Dead execution environments on demand, for the fault-injection tests: a test asks that the Nth
 * invocation of a function (counted among the invocations `match` accepts, from the moment it
 * asks) loses its environment, and `lambda-functions.ts` makes it happen the way Lambda loses one:
 *
 * - `mid-work`: once the moment comes (a process whose command line matches `process` runs in the
 *   environment, or `afterMs` have passed since the event was handed over), the environment's
 *   whole PID namespace is killed: the runtime interface client and everything it started; an
 *   invocation that ends before its moment came (a short process seen by no look, every 5 ms)
 *   dies after its answer instead, so an armed fault always kills once;
 * - `after-response`: the function answers, then the environment is killed and the answer never
 *   reaches the caller.
 *
 * The invocation then fails as Lambda reports a dead runtime: `Runtime.ExitError` (a killed
 * runtime), or `Lambda.Unknown` (what Step Functions reports when Lambda gives no error type, as
 * for an out-of-memory end). Nothing here runs unless a test arms a fault.
 */
import { readFile } from 'node:fs/promises';
import { descendants } from './image-sandbox.ts';
import { FunctionError } from './lambda-runtime-api.ts';

export type DeathReport = 'Runtime.ExitError' | 'Lambda.Unknown';

export interface FaultSpec {
  /** The workflow task (`Detect`, `ImportRawHistory`, `RewriteHistory`, `Push`, `Complete`, `RecordFailure`, …). */
  readonly fn: string;
  /** Which of the matching invocations dies, counted from 1 once armed (default 1). */
  readonly nth?: number;
  /** Which invocations count (e.g. one repository's); all of the function's by default. */
  readonly match?: (event: unknown) => boolean;
  readonly when: 'mid-work' | 'after-response';
  /** For `mid-work`: a process the step starts (its command line), else a delay (default 0 ms). */
  readonly process?: RegExp;
  readonly afterMs?: number;
  /** For `mid-work`, instead: a condition outside the environment (a receiver holds its request). */
  readonly once?: () => boolean;
  readonly report?: DeathReport;
}

export interface Death {
  readonly fn: string;
  readonly when: FaultSpec['when'];
  readonly report: DeathReport;
  /** What was running when the environment died (a command line, or the moment). */
  readonly during: string;
}

export interface ArmedFault {
  readonly spec: FaultSpec;
  /** Resolves once the fault has killed an environment. */
  readonly died: Promise<Death>;
  /** Whether it did (for a test's check that the fault really happened). */
  readonly death: () => Death | undefined;
  /** Why it could not (the invocation ended before its moment came). */
  readonly missed: () => string | undefined;
}

/** What `lambdaFunction` does with one invocation that is to die. */
export interface InvocationFault {
  readonly when: FaultSpec['when'];
  /** Resolves with what was running once the moment has come; never, if it does not. */
  moment(sandboxPid: number, over: () => boolean): Promise<string | undefined>;
  /** The failure the invocation reports. */
  readonly error: FunctionError;
  died(during: string): void;
  missed(why: string): void;
}

export interface FaultPlan {
  inject(spec: FaultSpec): ArmedFault;
  /** The fault this invocation of task `name` must suffer, if any. */
  forInvocation(name: string, event: unknown): InvocationFault | undefined;
  /** Disarms every fault not yet spent. */
  clear(): void;
}

/** What Lambda's runtime reports when its process was killed (`signal: killed`). */
const KILLED = 'Runtime exited with error: signal: killed';

export function deathError(report: DeathReport): FunctionError {
  return report === 'Lambda.Unknown'
    ? new FunctionError(
        'Lambda.Unknown',
        `The cause could not be determined because Lambda did not return an error type. Returned payload: ${JSON.stringify({ errorMessage: `Error: ${KILLED}` })}`,
      )
    : new FunctionError('Runtime.ExitError', `Error: ${KILLED}`);
}

export function faultPlan(): FaultPlan {
  const armed: { spec: FaultSpec; seen: number; fault: InvocationFault }[] = [];
  return {
    inject(spec) {
      let death: Death | undefined;
      let missed: string | undefined;
      let resolve: (death: Death) => void = () => undefined;
      const died = new Promise<Death>((done) => {
        resolve = done;
      });
      const report = spec.report ?? 'Runtime.ExitError';
      const fault: InvocationFault = {
        when: spec.when,
        error: deathError(report),
        moment: (pid, over) => momentOf(spec, pid, over),
        died(during) {
          death = { fn: spec.fn, when: spec.when, report, during };
          resolve(death);
        },
        missed(why) {
          missed = why;
        },
      };
      armed.push({ spec, seen: 0, fault });
      return { spec, died, death: () => death, missed: () => missed };
    },
    forInvocation(name, event) {
      for (const [index, entry] of armed.entries()) {
        if (name !== entry.spec.fn) continue;
        if (entry.spec.match && !entry.spec.match(event)) continue;
        entry.seen += 1;
        if (entry.seen < (entry.spec.nth ?? 1)) continue;
        armed.splice(index, 1);
        return entry.fault;
      }
      return undefined;
    },
    clear() {
      armed.length = 0;
    },
  };
}

async function momentOf(spec: FaultSpec, sandboxPid: number, over: () => boolean) {
  const started = Date.now();
  const afterMs = spec.afterMs ?? 0;
  for (;;) {
    if (over()) return undefined;
    if (spec.once) {
      if (spec.once()) return 'the moment the test waited for';
    } else if (spec.process) {
      for (const pid of await descendants(sandboxPid)) {
        const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        const line = command.replaceAll('\0', ' ').trim();
        if (spec.process.test(line)) return line;
      }
    } else if (Date.now() - started >= afterMs) {
      return `${afterMs} ms into the invocation`;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
