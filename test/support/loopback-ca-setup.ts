import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { selfSignedCertificate } from './tls-front.ts';

/**
 * An https identity for 127.0.0.1 that the e2e workers trust, for the servers a test plays on the
 * public web over https (an MCP client's metadata document, which the SDK's client insists on
 * serving over https): a self-signed certificate made with openssl, added to `NODE_EXTRA_CA_CERTS`
 * in the environment the workers inherit (Node reads it at start), exactly as an operator adds a
 * private CA to a Lambda function. The certificates already named there stay (a machine behind a
 * TLS-inspecting proxy needs its CA for npm, which the worker image's build runs). Its key never
 * leaves the test run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { key, cert, certificateFile } = await selfSignedCertificate('127.0.0.1', 'IP:127.0.0.1');
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  const kept = previous ? await readFile(previous, 'utf8').catch(() => '') : '';
  const bundle = join(dirname(certificateFile), 'extra-ca-certs.pem');
  await writeFile(bundle, `${kept.trimEnd()}\n${cert.toString('utf8')}`);
  process.env.NODE_EXTRA_CA_CERTS = bundle;
  project.provide('loopbackTls', { key: key.toString('utf8'), cert: cert.toString('utf8') });
  return async () => {
    if (previous === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = previous;
    await rm(dirname(certificateFile), { recursive: true, force: true });
  };
}
