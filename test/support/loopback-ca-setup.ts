import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TestProject } from 'vitest/node';
import { selfSignedCertificate } from './tls-front.ts';

/**
 * An https identity for 127.0.0.1 that the e2e workers trust, for the servers a test plays on the
 * public web over https (an MCP client's metadata document, which the SDK's client insists on
 * serving over https): a self-signed certificate made with openssl, named to Node through
 * `NODE_EXTRA_CA_CERTS` in the environment the workers inherit (Node reads it at start), exactly as
 * an operator adds a private CA to a Lambda function. Its key never leaves the test run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { key, cert, certificateFile } = await selfSignedCertificate('127.0.0.1', 'IP:127.0.0.1');
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  process.env.NODE_EXTRA_CA_CERTS = certificateFile;
  project.provide('loopbackTls', { key: key.toString('utf8'), cert: cert.toString('utf8') });
  return async () => {
    if (previous === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = previous;
    await rm(dirname(certificateFile), { recursive: true, force: true });
  };
}
