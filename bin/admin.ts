/**
 * `npm run admin -- <command>`: manages what the API assumes exists (users, OAuth applications,
 * repositories) and prints JSON. Talks to the local stack (endpoints from `.data/local.json`,
 * written by `npm start`; `LOCAL_ENDPOINTS_FILE` overrides the path) unless given `--table <name>`, which uses the deployed table with the
 * usual AWS credentials and region from the environment.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ENV } from '#shared/config';

// Locally we run Node 20; the Lambda runtime is Node 22, so the SDK's Node 20 notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: npm run admin -- <command> [--table <name> [--region <r>]]
  user create <login> --password <pw> [--email <e> [--public-email]] [--name <n>] [--site-admin]
  user otp enable <login>
  user otp disable <login>
  app create --owner <login> --name <name> --url <homepage> --callback-url <url>
             [--client-id <id> [--client-secret <secret>]]   (a well-known client's own credentials)
  app suspend <client_id>
  app unsuspend <client_id>
  app token-expiration enable|disable <client_id>
  app device-flow enable|disable <client_id>
  oauth registration enable|disable   (dynamic client registration, RFC 7591; off by default)
  repo create <owner>/<name> [--private]
  With --table, \`user otp enable\` also needs --kms-key <key id or alias> (the stack's secrets key).`;

class UsageError extends Error {}

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        password: { type: 'string' },
        email: { type: 'string' },
        'public-email': { type: 'boolean' },
        name: { type: 'string' },
        'site-admin': { type: 'boolean' },
        owner: { type: 'string' },
        url: { type: 'string' },
        'callback-url': { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        private: { type: 'boolean' },
        table: { type: 'string' },
        region: { type: 'string' },
        'kms-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Points the data layer at the right table before any data module is loaded. */
async function connect(flags: Flags): Promise<void> {
  if (flags.table) {
    process.env[ENV.tableName] = flags.table;
    if (flags.region) process.env.AWS_REGION = flags.region;
    if (flags['kms-key']) process.env[ENV.secretsKmsKeyId] = flags['kms-key'];
    return;
  }
  const file = process.env.LOCAL_ENDPOINTS_FILE ?? new URL('../.data/local.json', import.meta.url);
  let endpoints: {
    tableName: string;
    dynamodbEndpoint: string;
    secretsKeyFile?: string;
    eventsEndpoint?: string;
  };
  try {
    endpoints = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    throw new Error(
      'The local stack is not running (no .data/local.json): start it with `npm start`, or pass --table <name> for a deployed table.',
    );
  }
  process.env[ENV.tableName] = endpoints.tableName;
  process.env[ENV.dynamodbEndpoint] = endpoints.dynamodbEndpoint;
  if (endpoints.secretsKeyFile) process.env[ENV.secretsKeyFile] = endpoints.secretsKeyFile;
  // Security events (`user otp enable`) go to the local stack's event bus.
  if (endpoints.eventsEndpoint) process.env[ENV.eventsEndpoint] = endpoints.eventsEndpoint;
}

type Flags = ReturnType<typeof parseCommandLine>['values'];

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

async function run(): Promise<unknown> {
  const { values: flags, positionals } = parseCommandLine();
  const [noun, verb, ...rest] = positionals;
  if (flags.help || !noun) throw new UsageError('');
  await connect(flags);
  const command = `${noun} ${verb ?? ''}`;
  switch (command) {
    case 'user create': {
      const [{ isValidLogin }, { isAcceptablePassword }, { createAccount }] = await Promise.all([
        import('#domain/users'),
        import('#domain/passwords'),
        import('#services/accounts'),
      ]);
      const login = required(rest[0], '<login>');
      const password = required(flags.password, '--password');
      if (!isValidLogin(login))
        throw new Error(`invalid login "${login}": letters, digits and single hyphens, at most 39`);
      if (flags['public-email'] && !flags.email) throw new UsageError('--public-email needs --email');
      if (!isAcceptablePassword(password))
        throw new Error(
          'password too weak: at least 15 characters, or 8 with a digit and a lower-case letter',
        );
      const user = await createAccount({
        login,
        password,
        email: flags.email,
        publicEmail: flags['public-email'],
        name: flags.name,
        siteAdmin: flags['site-admin'],
      });
      if (!user) throw new Error(`login "${login}" is already taken`);
      return user;
    }
    case 'user otp': {
      if (rest[0] === 'disable') {
        const { disableOtp } = await import('#services/sign-in');
        const login = required(rest[1], '<login>');
        if (!(await disableOtp(login))) throw new Error(`"${login}" has no two-factor authentication`);
        return { login, two_factor_authentication: false };
      }
      if (rest[0] !== 'enable') throw new UsageError(`unknown command: user otp ${rest[0] ?? ''}`);
      const [{ newTotpSecret, otpauthUri }, { enableOtp }] = await Promise.all([
        import('#domain/totp'),
        import('#services/sign-in'),
      ]);
      const login = required(rest[1], '<login>');
      const secret = newTotpSecret();
      // Stored sealed (KMS with --kms-key, else the local stack's key file); shown once here.
      if (!(await enableOtp(login, secret))) throw new Error(`no user "${login}"`);
      return { login, otpauth_uri: otpauthUri('oauth-import-service', login, secret) };
    }
    case 'app create': {
      const [{ isAcceptableAppUrl }, { registerApp }, { userNamed }] = await Promise.all([
        import('#domain/apps'),
        import('#services/apps'),
        import('#services/accounts'),
      ]);
      const owner = required(flags.owner, '--owner');
      const name = required(flags.name, '--name');
      const url = required(flags.url, '--url');
      const callbackUrl = required(flags['callback-url'], '--callback-url');
      for (const [flag, value] of [
        ['--url', url],
        ['--callback-url', callbackUrl],
      ] as const) {
        if (!isAcceptableAppUrl(value))
          throw new Error(`${flag} must be an absolute http(s) URL without credentials or fragment`);
      }
      const user = await userNamed(owner);
      if (!user) throw new Error(`no user "${owner}"`);
      const clientId = flags['client-id'];
      const given = flags['client-secret'];
      if (given !== undefined && clientId === undefined)
        throw new UsageError('--client-secret needs --client-id');
      const { app, clientSecret } = await registerApp(
        { ownerLogin: user.login, name, url, callbackUrl },
        clientId === undefined ? undefined : { clientId, clientSecret: given },
      );
      return { ...app, clientSecret };
    }
    case 'app suspend':
    case 'app unsuspend': {
      const { setAppSuspended } = await import('#services/apps');
      const clientId = required(rest[0], '<client_id>');
      const app = await setAppSuspended(clientId, verb === 'suspend');
      if (!app) throw new Error(`no application with client_id "${clientId}"`);
      return app;
    }
    case 'app token-expiration':
    case 'app device-flow': {
      const { setAppSwitch } = await import('#services/apps');
      const [switchTo, clientId] = rest;
      if (switchTo !== 'enable' && switchTo !== 'disable')
        throw new UsageError(`app ${verb} needs enable or disable`);
      const setting = verb === 'device-flow' ? 'deviceFlowEnabled' : 'expireUserTokens';
      const app = await setAppSwitch(required(clientId, '<client_id>'), setting, switchTo === 'enable');
      if (!app) throw new Error(`no application with client_id "${clientId}"`);
      return app;
    }
    case 'oauth registration': {
      const { setDynamicRegistration } = await import('#services/public-clients');
      const [switchTo] = rest;
      if (switchTo !== 'enable' && switchTo !== 'disable')
        throw new UsageError('oauth registration needs enable or disable');
      await setDynamicRegistration(switchTo === 'enable');
      return { dynamicClientRegistration: switchTo === 'enable' };
    }
    case 'repo create': {
      const [{ isValidRepositoryName }, { createForOwner }, { userNamed }] = await Promise.all([
        import('#domain/repositories'),
        import('#services/repositories'),
        import('#services/accounts'),
      ]);
      const [owner, name, extra] = required(rest[0], '<owner>/<name>').split('/');
      if (!owner || !name || extra !== undefined)
        throw new UsageError('repository must be given as <owner>/<name>');
      if (!isValidRepositoryName(name)) throw new Error(`invalid repository name "${name}"`);
      const user = await userNamed(owner);
      if (!user) throw new Error(`no user "${owner}"`);
      return createForOwner(user, { name, private: flags.private }).catch((error: unknown) => {
        throw (error as { status?: number }).status === 422
          ? new Error(`${user.login}/${name} already exists`)
          : error;
      });
    }
    default:
      throw new UsageError(`unknown command: ${command.trim()}`);
  }
}

/** Output uses the API's snake_case field names: `clientId` → `client_id`. */
const snakeCase = (value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [
          key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
          snakeCase(inner),
        ]),
      )
    : value;

try {
  console.log(JSON.stringify(snakeCase(await run()), null, 2));
} catch (error) {
  if (error instanceof UsageError) {
    if (error.message) console.error(`error: ${error.message}\n`);
    console.error(USAGE);
    process.exit(2);
  }
  console.error(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
  process.exit(1);
}
