import { describe, expect, it } from 'vitest';
import { canonicalVcs, executionName, splitGitRemoteId } from '#domain/imports';
import { checkOriginUrl, isForbiddenAddress } from '#domain/origin-url';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254', // the instance metadata service
    '100.64.0.1', // CGNAT
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fd00:ec2::254', // EC2's IPv6 metadata address
    'fc00::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1', // IPv4-mapped loopback
    '::ffff:7f00:1', // the same, in hex groups
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
    '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
    '64:ff9b:1::808:808', // local-use NAT64, whatever it embeds
    '64:ff9b:1:ffff::1',
    '::ffff:0:808:808', // SIIT IPv4-translated, whatever it embeds
    '::ffff:0:a9fe:a9fe',
    '[::1]',
    'fe80::1%eth0',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '140.82.112.3', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(isForbiddenAddress(address)).toBe(false);
    },
  );

  it('allows exactly the addresses an operator listed', () => {
    expect(isForbiddenAddress('127.0.0.1', ['127.0.0.1'])).toBe(false);
    expect(isForbiddenAddress('::ffff:127.0.0.1', ['127.0.0.1'])).toBe(false);
    expect(isForbiddenAddress('0:0:0:0:0:0:0:1', ['::1'])).toBe(false);
    expect(isForbiddenAddress('127.0.0.2', ['127.0.0.1'])).toBe(true);
    expect(isForbiddenAddress('169.254.169.254', ['127.0.0.1'])).toBe(true);
  });
});

describe('checkOriginUrl', () => {
  const problem = (raw: string, vcs: Parameters<typeof checkOriginUrl>[1] = null, allowed: string[] = []) => {
    const check = checkOriginUrl(raw, vcs, allowed);
    return check.ok ? 'ok' : check.problem;
  };

  it('accepts plain URLs of the schemes each origin type speaks', () => {
    expect(problem('https://github.com/octocat/Hello-World.git', 'git')).toBe('ok');
    expect(problem('git://example.org/project.git', 'git')).toBe('ok');
    expect(problem('svn://svn.example.org/repo', 'subversion')).toBe('ok');
    expect(problem('svn://svn.example.org/repo', null)).toBe('ok');
    expect(problem('https://hg.example.org/repo', 'mercurial')).toBe('ok');
  });

  it('refuses a scheme the origin type does not speak', () => {
    expect(problem('svn://svn.example.org/repo', 'git')).toBe('scheme');
    expect(problem('git://example.org/x', 'mercurial')).toBe('scheme');
  });

  it('refuses svn+ssh: ssh needs keys the API has no field for, and ssh cannot go through the network guard', () => {
    expect(problem('svn+ssh://svn.example.org/repo', 'subversion')).toBe('scheme');
    expect(problem('svn+ssh://svn.example.org/repo', null)).toBe('scheme');
  });

  it.each([
    ['ext::sh -c touch% /tmp/pwned', 'scheme'],
    ['fd::3', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['ssh://git@example.org/x.git', 'scheme'],
    ['git@example.org:x.git', 'not_a_url'],
    ['/srv/git/x.git', 'not_a_url'],
    ['--upload-pack=touch /tmp/pwned', 'option_like'],
    ['-uhttps://example.org', 'option_like'],
    ['https://example.org/x y', 'not_a_url'],
    ['https://example.org/x\n', 'not_a_url'],
    ['https://user:secret@example.org/x.git', 'credentials'],
    ['https://token@example.org/x.git', 'credentials'],
    ['http://10.0.0.1/x.git', 'forbidden_address'],
    ['http://169.254.169.254/latest/meta-data/', 'forbidden_address'],
    ['http://[::1]:8080/x', 'forbidden_address'],
    ['http://[::ffff:127.0.0.2]/x', 'forbidden_address'],
    ['http://[fd00:ec2::254]/x', 'forbidden_address'],
    ['http://localhost:3000/x', 'forbidden_address'],
    ['http://api.localhost/x', 'forbidden_address'],
    ['http://2130706433/x', 'forbidden_address'], // 127.0.0.1 written as one number: URL normalises it
    ['http://0x7f.1/x', 'forbidden_address'],
    [`https://example.org/${'a'.repeat(2100)}`, 'too_long'],
  ])('refuses %j (%s)', (raw, expected) => {
    expect(problem(raw)).toBe(expected);
  });

  it('allows a listed loopback address for local use, and only that one', () => {
    expect(problem('http://127.0.0.1:8080/x.git', 'git', ['127.0.0.1'])).toBe('ok');
    expect(problem('http://127.0.0.2:8080/x.git', 'git', ['127.0.0.1'])).toBe('forbidden_address');
  });
});

describe('import names', () => {
  it('answers the VCS aliases with the full names GitHub echoed', () => {
    expect(canonicalVcs('svn')).toBe('subversion');
    expect(canonicalVcs('hg')).toBe('mercurial');
    expect(canonicalVcs('git')).toBe('git');
    expect(canonicalVcs('cvs')).toBeUndefined();
    expect(canonicalVcs('toString')).toBeUndefined();
  });

  it('names executions owner.repo.attempt-N within Step Functions rules, distinct for long names', () => {
    expect(executionName('octocat', 'Hello-World', 3)).toBe('octocat.Hello-World.attempt-3');
    const long = 'r'.repeat(100);
    const a = executionName('o'.repeat(39), `${long}a`.slice(0, 100), 12);
    const b = executionName('o'.repeat(39), `${long}b`.slice(1, 101), 12);
    for (const name of [a, b]) {
      expect(name.length).toBeLessThanOrEqual(80);
      expect(name).toMatch(/^[A-Za-z0-9._-]+\.attempt-12$/);
    }
    expect(a).not.toBe(b);
  });

  it('names the later parts of an attempt owner.repo.attempt-N.part-P, within 80 characters', () => {
    expect(executionName('octocat', 'Hello-World', 3, 'attempt', 2)).toBe(
      'octocat.Hello-World.attempt-3.part-2',
    );
    expect(executionName('octocat', 'Hello-World', 3, 'attempt', 1)).toBe('octocat.Hello-World.attempt-3');
    expect(executionName('octocat', 'w', 4, 'sync', 12)).toBe('octocat.w.sync-4.part-12');
    const longest = executionName('o'.repeat(39), 'r'.repeat(100), 2 ** 31, 'attempt', 99_999);
    expect(longest.length).toBe(80);
    expect(longest).toMatch(/^o+\.r+-[0-9a-z]{7}\.attempt-2147483648\.part-99999$/);
  });

  it('reads Git identities', () => {
    expect(splitGitRemoteId('Mona Lisa <mona@example.org>')).toEqual({
      name: 'Mona Lisa',
      email: 'mona@example.org',
    });
    expect(splitGitRemoteId('nobody@uuid')).toBeUndefined();
  });
});
