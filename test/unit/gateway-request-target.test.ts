import { describe, expect, it } from 'vitest';
import { originFormUrl } from '#local/http-server';

describe("the local API Gateway's request-target check", () => {
  it('takes a path with its query, on the local origin', () => {
    const url = originFormUrl('/octocat/x.git/info/refs?service=git-upload-pack');
    expect(url?.href).toBe('http://localhost/octocat/x.git/info/refs?service=git-upload-pack');
  });

  it('keeps a path that dot segments or doubled slashes inside lead to `//` on the local origin', () => {
    expect(originFormUrl('/a/..//evil/o/r.git/info/refs')?.origin).toBe('http://localhost');
    expect(originFormUrl('/api/v3//user')?.origin).toBe('http://localhost');
  });

  it('refuses every target that names a host, or is no path', () => {
    const refused = [
      undefined,
      '',
      '*',
      '127.0.0.1:9',
      'localhost:9/o/r.git/info/refs',
      'http://127.0.0.1:9/o/r.git/info/refs',
      'http://localhost/o/r.git/info/refs',
      '//127.0.0.1:9/o/r.git/info/refs',
      '/\\127.0.0.1:9/o/r.git/info/refs',
      '/\t/127.0.0.1:9/o/r.git/info/refs',
      '/\n\\127.0.0.1:9/o/r.git/info/refs',
    ];
    for (const target of refused) expect(originFormUrl(target), JSON.stringify(target)).toBeUndefined();
  });
});
