import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

/**
 * DynamoDB Local as `scripts/setup.sh` leaves it: the emulator under `.data/dynamodb-local/` and
 * `scripts/java/LoopbackDynamoDbLocal.java` compiled beside it. The launcher binds 127.0.0.1 only
 * and prints `LISTENING 127.0.0.1:<port>` once it accepts connections.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EMULATOR_DIR = path.join(ROOT, '.data', 'dynamodb-local');
const EMULATOR_JAR = path.join(EMULATOR_DIR, 'DynamoDBLocal.jar');
const LAUNCHER_DIR = path.join(EMULATOR_DIR, 'launcher');
const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';

/** Small heap and client-only JIT: the emulator starts in about half the time of the defaults. */
const JVM_FLAGS = [
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xmx256m',
  '-Djava.net.preferIPv4Stack=true',
];

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const OUTPUT_LINES_KEPT = 40;

/** Any values work for DynamoDB Local; these are the ones every local client of this project uses. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const LOCAL_REGION = 'us-east-1';

export interface DynamoDbLocalOptions {
  /** TCP port on 127.0.0.1; 0 or absent picks a free one. */
  port?: number;
  /** Directory for the database files, kept between runs; absent means in memory. */
  dataDir?: string;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`, never `localhost`, which may resolve to ::1 where nothing listens. */
  readonly endpoint: string;
  readonly port: number;
  /** Stops the JVM (SIGTERM, then SIGKILL after a grace period). Safe to call more than once. */
  stop(): Promise<void>;
}

/** A client for a DynamoDB Local endpoint, with the project's dummy credentials. */
export function localDynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
}

/**
 * Starts DynamoDB Local and resolves once it has answered a real ListTables call.
 *
 * The database is shared by all credentials and regions (`-sharedDb`), so that code which signs
 * with other dummy credentials or another AWS_REGION still sees the same tables. The JVM cannot
 * outlive this process: it is killed on `exit`, and it exits by itself when its standard input (a
 * pipe from this process) closes, which also covers a SIGKILL of this process. Ctrl-C reaches it
 * directly, since it stays in the terminal's foreground process group.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  assertInstalled();
  const args = [
    ...JVM_FLAGS,
    `-Djava.library.path=${path.join(EMULATOR_DIR, 'DynamoDBLocal_lib')}`,
    '-cp',
    [EMULATOR_JAR, LAUNCHER_DIR].join(path.delimiter),
    LAUNCHER_CLASS,
    '-port',
    String(options.port ?? 0),
    '--exit-on-stdin-eof',
    '-sharedDb',
    '-disableTelemetry',
  ];
  if (options.dataDir) {
    const dataDir = path.resolve(options.dataDir);
    mkdirSync(dataDir, { recursive: true });
    args.push('-dbPath', dataDir);
  } else {
    args.push('-inMemory');
  }

  const child = spawn('java', args, {
    cwd: EMULATOR_DIR,
    stdio: ['pipe', 'pipe', 'pipe'],
    // DynamoDB Local 1.25 ignores -disableTelemetry; only this variable turns telemetry off.
    env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const output = recentOutput(child);

  let port: number;
  try {
    port = await listeningPort(child, output);
    await untilAnswering(`http://127.0.0.1:${port}`, child, output);
  } catch (error) {
    process.off('exit', killOnExit);
    await terminate(child);
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    stop() {
      stopping ??= terminate(child).finally(() => process.off('exit', killOnExit));
      return stopping;
    },
  };
}

function assertInstalled(): void {
  const launcher = path.join(LAUNCHER_DIR, `${LAUNCHER_CLASS}.class`);
  for (const file of [EMULATOR_JAR, launcher]) {
    if (!existsSync(file)) {
      throw new Error(
        `DynamoDB Local is not set up (${path.relative(ROOT, file)} is missing): run \`npm run setup\``,
      );
    }
  }
}

interface OutputLog {
  text(): string;
  onLine(listener: (line: string) => void): void;
}

/** Keeps the JVM's last lines of output for error messages, and keeps its pipes drained. */
function recentOutput(child: ChildProcess): OutputLog {
  const lines: string[] = [];
  const listeners: ((line: string) => void)[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
        for (const listener of listeners) listener(line);
      }
    });
  }
  // The launcher only reads stdin to notice its end; a write error here means it already exited.
  child.stdin?.on('error', () => {});
  return {
    text: () => lines.join('\n').trim(),
    onLine: (listener) => listeners.push(listener),
  };
}

function listeningPort(child: ChildProcess, output: OutputLog): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(startError(`no LISTENING line within ${STARTUP_TIMEOUT_MS} ms`, output)),
      STARTUP_TIMEOUT_MS,
    );
    const settle = (settleWith: () => void) => {
      clearTimeout(timer);
      child.off('close', onClose);
      child.off('error', onError);
      settleWith();
    };
    // 'close' rather than 'exit': it comes after the output pipes are drained, so the error shows it all.
    const onClose = (code: number | null, signal: NodeJS.Signals | null) =>
      settle(() => reject(startError(`the JVM exited (${signal ?? `status ${code}`})`, output)));
    const onError = (error: NodeJS.ErrnoException) =>
      settle(() =>
        reject(
          error.code === 'ENOENT'
            ? new Error(
                'DynamoDB Local needs Java 17 or newer, and `java` is not on PATH. Run `npm run setup` as root, ' +
                  'or: sudo apt-get install -y --no-install-recommends openjdk-17-jre-headless openjdk-17-jdk-headless',
              )
            : error,
        ),
      );
    child.once('close', onClose);
    child.once('error', onError);
    output.onLine((line) => {
      const match = /^LISTENING 127\.0\.0\.1:(\d+)$/.exec(line.trim());
      if (match?.[1]) settle(() => resolve(Number(match[1])));
    });
  });
}

/** Retries ListTables until it succeeds: the only proof that the emulator serves requests. */
async function untilAnswering(endpoint: string, child: ChildProcess, output: OutputLog): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000 },
  });
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  try {
    for (;;) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw startError('the JVM exited before answering ListTables', output);
        }
        if (Date.now() > deadline) {
          throw startError(`ListTables on ${endpoint} kept failing: ${String(error)}`, output);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } finally {
    client.destroy();
  }
}

function startError(reason: string, output: OutputLog): Error {
  const text = output.text();
  return new Error(`DynamoDB Local did not start: ${reason}${text ? `\n--- its output ---\n${text}` : ''}`);
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
