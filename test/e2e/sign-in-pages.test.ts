import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, enableOtp } from '#test/fixtures';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'octocat', 'octocat-pass-1');
});
afterAll(async () => {
  await stack?.stop();
});

describe('sign-in pages', () => {
  it('serve the login form with CSP, no framing, and a CSRF cookie', async () => {
    const browser = new WebClient(stack.webUrl);
    const response = await browser.get('/login');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(browser.cookie('csrf')).toBeTruthy();
    const setCookie = response.headers.getSetCookie().join('\n');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).not.toContain('Secure'); // served over plain http locally
    expect(browser.lastHtml).toContain('<label for="password">');
  });

  it('refuse a form post without the CSRF token or from another origin', async () => {
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    const csrf = browser.csrf();
    expect(
      (await browser.post('/login', { login: 'octocat', password: 'octocat-pass-1' }, { csrf: null })).status,
    ).toBe(403);
    expect(
      (await browser.post('/login', { login: 'octocat', password: 'octocat-pass-1' }, { csrf: 'forged' }))
        .status,
    ).toBe(403);
    const crossSite = await browser.post(
      '/login',
      { login: 'octocat', password: 'octocat-pass-1' },
      { csrf, headers: { Origin: 'https://evil.example' } },
    );
    expect(crossSite.status).toBe(403);
    expect(browser.cookie('session')).toBeUndefined();
  });

  it('sign in and go back to return_to', async () => {
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login?return_to=%2Fsettings%2Ftokens');
    const wrong = await browser.post('/login', {
      login: 'octocat',
      password: 'nope-nope-1',
      return_to: '/settings/tokens',
    });
    expect(wrong.status).toBe(401);
    expect(browser.lastHtml).toContain('Incorrect username or password.');

    const ok = await browser.post('/login', {
      login: 'octocat',
      password: 'octocat-pass-1',
      return_to: '/settings/tokens',
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/settings/tokens');
    expect(browser.cookie('session')).toBeTruthy();

    const again = await browser.get('/login');
    expect(again.status).toBe(302);
    expect((await browser.get('/signup')).status).toBe(302);
  });

  it('never redirects off-site after sign-in', async () => {
    for (const target of [
      '//evil.example/x',
      'https://evil.example/',
      '/\\evil.example',
      'javascript:alert(1)',
    ]) {
      const browser = new WebClient(stack.webUrl);
      await browser.get('/login');
      const response = await browser.post('/login', {
        login: 'octocat',
        password: 'octocat-pass-1',
        return_to: target,
      });
      expect(response.headers.get('location'), target).toBe('/');
    }
  });

  it('never redirects off-site when return_to only becomes //host once normalised (login and signup)', async () => {
    const home = '/';
    const targets = [
      '/.//evil.example/x',
      '/..//evil.example/x',
      '/%2e//evil.example/x',
      '/a/..//evil.example/x',
      '/.\\/evil.example/x',
      '/%2f%2fevil.example/x',
      '/\t/evil.example/x',
      '/\n/evil.example/x',
    ];
    const signedIn = new WebClient(stack.webUrl);
    await signedIn.get('/login');
    await signedIn.post('/login', { login: 'octocat', password: 'octocat-pass-1' });
    for (const [index, target] of targets.entries()) {
      const browser = new WebClient(stack.webUrl);
      await browser.get('/login');
      const login = await browser.post('/login', {
        login: 'octocat',
        password: 'octocat-pass-1',
        return_to: target,
      });
      expect(login.headers.get('location'), `POST /login ${target}`).toBe(home);
      const query = `return_to=${encodeURIComponent(target)}`;
      expect((await signedIn.get(`/login?${query}`)).headers.get('location'), `GET /login ${target}`).toBe(
        home,
      );
      expect((await signedIn.get(`/signup?${query}`)).headers.get('location'), `GET /signup ${target}`).toBe(
        home,
      );
      const newcomer = new WebClient(stack.webUrl);
      await newcomer.get('/signup');
      const signup = await newcomer.post('/signup', {
        login: `redirect-${index}`,
        email: `r${index}@example.com`,
        password: 'long-enough-1',
        return_to: target,
      });
      expect(signup.status, `POST /signup ${target}`).toBe(303);
      expect(signup.headers.get('location'), `POST /signup ${target}`).toBe(home);
    }
  });

  it('sign up, then land signed in where the user was going; taken names and weak passwords are refused', async () => {
    const browser = new WebClient(stack.webUrl);
    await browser.get('/signup?return_to=%2Fsettings%2Ftokens');
    const weak = await browser.post('/signup', {
      login: 'newbie',
      email: 'n@example.com',
      password: 'short',
      return_to: '/settings/tokens',
    });
    expect(weak.status).toBe(422);
    const taken = await browser.post('/signup', {
      login: 'OctoCat',
      email: 'n@example.com',
      password: 'long-enough-1',
      return_to: '/settings/tokens',
    });
    expect(taken.status).toBe(422);
    expect(browser.lastHtml).toContain('is not available');
    const created = await browser.post('/signup', {
      login: 'newbie',
      email: 'n@example.com',
      password: 'long-enough-1',
      return_to: '/settings/tokens',
    });
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/settings/tokens');
    const me = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: `Basic ${Buffer.from('newbie:long-enough-1').toString('base64')}` },
    });
    expect(me.status).toBe(200);
  });

  it('hide and refuse sign-up when the OAuth client says allow_signup=false', async () => {
    const target = '/login/oauth/authorize?client_id=x&allow_signup=false';
    const browser = new WebClient(stack.webUrl);
    await browser.get(`/login?return_to=${encodeURIComponent(target)}`);
    expect(browser.lastHtml).not.toContain('Create an account');
    expect((await browser.get(`/signup?return_to=${encodeURIComponent(target)}`)).status).toBe(403);
    await browser.get(`/login?return_to=${encodeURIComponent('/login/oauth/authorize?client_id=x')}`);
    expect(browser.lastHtml).toContain('Create an account');
  });

  it('ask two-factor users for their code after the password', async () => {
    await createUser(stack.endpointsFile, 'twofa', 'twofa-pass-1');
    const otp = await enableOtp(stack.endpointsFile, 'twofa');
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    const step1 = await browser.post('/login', {
      login: 'twofa',
      password: 'twofa-pass-1',
      return_to: '/settings/tokens',
    });
    expect(step1.status).toBe(303);
    expect(step1.headers.get('location')).toBe('/login/two-factor?return_to=%2Fsettings%2Ftokens');
    // Half signed in is not signed in.
    expect((await browser.get('/login')).status).toBe(200);

    await browser.get('/login/two-factor?return_to=%2Fsettings%2Ftokens');
    expect(browser.lastHtml).toContain('autocomplete="one-time-code"');
    const wrong = await browser.post('/login/two-factor', { otp: '000000', return_to: '/settings/tokens' });
    expect(wrong.status).toBe(401);
    const ok = await browser.post('/login/two-factor', { otp: otp.code(), return_to: '/settings/tokens' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/settings/tokens');
    expect((await browser.get('/login')).status).toBe(302);
  });
});
