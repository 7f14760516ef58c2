import { describe, expect, it } from 'vitest';
import { admission, signedInReserve } from '#git-server/admission';
import { clientNetwork } from '#git-server/client-address';

describe('admission', () => {
  it('leaves the signed-in reserve to signed-in clients, however many anonymous clients ask', () => {
    const slots = admission({ total: 8, perClient: 2, reservedForSignedIn: signedInReserve(8) });
    const anonymous = Array.from({ length: 10 }, (_, i) => slots.admit(`address:192.0.2.${i}`, false));
    expect(anonymous.filter((slot) => slot.admitted)).toHaveLength(6);
    expect(slots.admit('user:1', true).admitted).toBe(true);
    expect(slots.admit('user:1', true).admitted).toBe(true);
    expect(slots.admit('user:1', true)).toEqual({ admitted: false, full: 'client' });
    expect(slots.admit('user:2', true)).toEqual({ admitted: false, full: 'task' });
    const first = anonymous[0];
    if (first?.admitted) first.release();
    expect(slots.admit('address:192.0.2.99', false).admitted).toBe(true);
  });
});

describe('clientNetwork', () => {
  it('keeps IPv4 addresses, reads IPv4-mapped ones as IPv4 and groups IPv6 ones by /64', () => {
    expect(clientNetwork('192.0.2.7')).toBe('192.0.2.7');
    expect(clientNetwork('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientNetwork('2001:db8:0:1::2')).toBe(clientNetwork('2001:db8:0:1:ffff:ffff:ffff:ffff'));
    expect(clientNetwork('2001:db8:0:1::2')).not.toBe(clientNetwork('2001:db8:0:2::2'));
    expect(clientNetwork('2001:DB8:0:1:a:b:192.0.2.1')).toBe('2001:db8:0:1::/64');
  });
});
