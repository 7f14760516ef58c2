/**
 * The Step Functions API operations the handlers use, over the loaded machines and their
 * executions. Errors are `ApiError`s named as the SDK's exception classes.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from './api-error.ts';
import { INVALID_NAME_CHARACTER, type LoadedMachine } from './definition.ts';
import type { Executions } from './executions.ts';
import { type Execution, MAX_PAYLOAD_BYTES, withoutUndefined } from './history.ts';

const STATE_MACHINE_ARN = /^arn:aws[\w-]*:states:[\w-]+:\d{12}:stateMachine:[^:]+$/;
const EXECUTION_ARN = /^arn:aws[\w-]*:states:[\w-]+:\d{12}:execution:[^:]+:[^:]+$/;

export type Params = Record<string, unknown>;

function requiredString(params: Params, member: string): string {
  const value = params[member];
  if (typeof value !== 'string') {
    throw new ApiError(
      'ValidationException',
      `1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`,
    );
  }
  return value;
}

function optionalString(params: Params, member: string, maxLength: number): string | undefined {
  const value = params[member];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > maxLength) {
    throw new ApiError(
      'ValidationException',
      `Value at '${member}' failed to satisfy constraint: Member must be a string of at most ${maxLength} characters`,
    );
  }
  return value;
}

/** A task token member: AWS checks its length (1 to 2048) before looking at it. */
function taskToken(params: Params): string {
  const token = requiredString(params, 'taskToken');
  if (token.length < 1 || token.length > 2048) {
    throw new ApiError(
      'ValidationException',
      "1 validation error detected: Value at 'taskToken' failed to satisfy constraint: Member must have length between 1 and 2048",
    );
  }
  return token;
}

function seconds(ms: number): number {
  return ms / 1000;
}

export type Operation = (params: Params) => unknown;

/** The operations by name (`StartExecution`, ...); `machines` is keyed by state machine ARN. */
export function apiOperations(
  machines: ReadonlyMap<string, LoadedMachine>,
  executions: Executions,
): Record<string, Operation> {
  function findExecution(params: Params): Execution {
    const arn = requiredString(params, 'executionArn');
    const execution = executions.get(arn);
    if (execution) return execution;
    if (!EXECUTION_ARN.test(arn)) throw new ApiError('InvalidArn', `Invalid Arn: '${arn}'`);
    throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
  }

  return {
    StartExecution(params) {
      const stateMachineArn = requiredString(params, 'stateMachineArn');
      const machine = machines.get(stateMachineArn);
      if (!machine) {
        if (!STATE_MACHINE_ARN.test(stateMachineArn))
          throw new ApiError('InvalidArn', `Invalid Arn: '${stateMachineArn}'`);
        throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
      }
      const name = optionalString(params, 'name', Number.MAX_SAFE_INTEGER) ?? randomUUID();
      if (name.length === 0 || name.length > 80 || INVALID_NAME_CHARACTER.test(name)) {
        throw new ApiError('InvalidName', `Invalid Name: '${name}'`);
      }
      const input = optionalString(params, 'input', Number.MAX_SAFE_INTEGER) ?? '{}';
      try {
        JSON.parse(input);
      } catch {
        throw new ApiError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${input}'`);
      }
      if (Buffer.byteLength(input) > MAX_PAYLOAD_BYTES) {
        throw new ApiError(
          'InvalidExecutionInput',
          'Execution input exceeds the maximum size of 262144 bytes',
        );
      }
      const existing = executions.get(executions.arnOf(machine, name));
      if (existing) {
        if (existing.status !== 'RUNNING' || existing.input !== input) {
          throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.arn}'`);
        }
        return { executionArn: existing.arn, startDate: seconds(existing.startDate) };
      }
      const execution = executions.start(machine, name, input);
      return { executionArn: execution.arn, startDate: seconds(execution.startDate) };
    },

    StopExecution(params) {
      const execution = findExecution(params);
      const error = optionalString(params, 'error', 256);
      const cause = optionalString(params, 'cause', 32768);
      executions.stop(execution, error, cause);
      return { stopDate: seconds(execution.stopDate ?? Date.now()) };
    },

    DescribeExecution(params) {
      const execution = findExecution(params);
      return withoutUndefined({
        executionArn: execution.arn,
        stateMachineArn: execution.machine.arn,
        name: execution.name,
        status: execution.status,
        startDate: seconds(execution.startDate),
        stopDate: execution.stopDate === undefined ? undefined : seconds(execution.stopDate),
        input: execution.input,
        inputDetails: { included: true },
        output: execution.output,
        outputDetails: execution.output === undefined ? undefined : { included: true },
        error: execution.error,
        cause: execution.cause,
        redriveCount: 0,
        redriveStatus: 'NOT_REDRIVABLE',
      });
    },

    SendTaskSuccess(params) {
      const token = taskToken(params);
      const output = requiredString(params, 'output');
      if (output.length > MAX_PAYLOAD_BYTES) {
        throw new ApiError(
          'ValidationException',
          "1 validation error detected: Value at 'output' failed to satisfy constraint: Member must have length less than or equal to 262144",
        );
      }
      try {
        JSON.parse(output);
      } catch {
        throw new ApiError('InvalidOutput', `Invalid Output: '${output}'`);
      }
      executions.tokens.find(token).settle({ kind: 'succeeded', output });
      return {};
    },

    SendTaskFailure(params) {
      const token = taskToken(params);
      const error = optionalString(params, 'error', 256);
      const cause = optionalString(params, 'cause', 32768);
      executions.tokens.find(token).settle({ kind: 'failed', error, cause });
      return {};
    },

    SendTaskHeartbeat(params) {
      executions.tokens.find(taskToken(params)).heartbeat();
      return {};
    },

    GetExecutionHistory(params) {
      const execution = findExecution(params);
      const maxResults =
        typeof params.maxResults === 'number' && params.maxResults > 0 ? params.maxResults : 100;
      if (maxResults > 1000) throw new ApiError('ValidationException', 'maxResults must be at most 1000');
      const token = params.nextToken;
      const offset = token === undefined || token === null ? 0 : Number(token);
      if (!Number.isInteger(offset) || offset < 0)
        throw new ApiError('InvalidToken', `Invalid Token: '${String(token)}'`);
      const includeData = params.includeExecutionData !== false;
      const numbered = execution.history.map((event, index) => ({ event, id: index + 1 }));
      const ordered = params.reverseOrder === true ? numbered.reverse() : numbered;
      const page = ordered.slice(offset, offset + maxResults);
      const events = page.map(({ event, id }) => {
        let details = event.details;
        if (details && !includeData) {
          const { input: _input, output: _output, ...rest } = details;
          details = rest;
        }
        return {
          id,
          previousEventId: id - 1,
          timestamp: seconds(event.timestamp),
          type: event.type,
          ...(event.detailsKey ? { [event.detailsKey]: details } : {}),
        };
      });
      return withoutUndefined({
        events,
        nextToken: offset + maxResults < ordered.length ? String(offset + maxResults) : undefined,
      });
    },
  };
}
