/** The certificate a guard proxy pinned to an https origin presents to the tool (see `pinned-origin.ts`). */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '#shared/tool-path';
import { bare } from './pinned-origin.ts';

/**
 * A key and self-signed certificate for `host` (its name, or its address), valid two days, made by
 * the `openssl` CLI in a private temp dir that is removed at once.
 */
export async function interceptionCertificate(host: string): Promise<{ key: string; cert: string }> {
  const name = bare(host);
  const san = isIP(name) === 0 ? `DNS:${name}` : `DNS:${name},IP:${name}`;
  const dir = await mkdtemp(join(tmpdir(), 'guard-tls-'));
  try {
    await promisify(execFile)(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=source-import guard',
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { env: { PATH: toolPath() }, timeout: 30_000 },
    );
    return {
      key: await readFile(join(dir, 'key.pem'), 'utf8'),
      cert: await readFile(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
