import { describe, expect, it } from 'vitest';
import { AuthThrottle, addressKey, TokenBuckets } from '../../src/app/throttle.ts';
import { loadConfig } from '../../src/config.ts';

describe('addressKey', () => {
  it('counts IPv4 as is, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2::1')).toBe(addressKey('2001:0db8:0001:0002:ffff:1:2:3'));
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
    expect(addressKey(undefined)).toBe('unknown');
  });
});

describe('TokenBuckets', () => {
  it('keeps at most maxKeys buckets: a forgotten key starts with a full bucket', () => {
    const buckets = new TokenBuckets(1, 1, 2);
    expect(buckets.take('a', 0).ok).toBe(true);
    expect(buckets.take('a', 0).ok).toBe(false);
    buckets.take('b', 0);
    buckets.take('c', 0);
    expect(buckets.take('a', 0).ok).toBe(true);
  });
});

describe('AuthThrottle', () => {
  it('lets a token seen to succeed past an address that spent its budget, and nothing else', () => {
    const throttle = new AuthThrottle({ perMinute: 1, burst: 1, maxAddresses: 100 });
    throttle.admit('192.0.2.1', 'good', 0).succeeded();
    throttle.admit('192.0.2.1', 'bad', 0).failed();
    expect(() => throttle.admit('192.0.2.1', 'other', 0)).toThrow(/retry after 60 s/);
    expect(() => throttle.admit('192.0.2.1', 'good', 0)).not.toThrow();
    expect(() => throttle.admit('192.0.2.2', 'other', 0)).not.toThrow();
  });

  it('gives the reservation back when authentication could not be decided', () => {
    const throttle = new AuthThrottle({ perMinute: 1, burst: 1, maxAddresses: 100 });
    throttle.admit('192.0.2.1', 'x', 0).abandoned();
    expect(() => throttle.admit('192.0.2.1', 'x', 0)).not.toThrow();
  });
});

describe('its configuration', () => {
  it('is on by default (10 per minute, bursts of 20, 10,000 addresses) and trusts no proxy', () => {
    expect(loadConfig({})).toMatchObject({
      authFailLimitPerMinute: 10,
      authFailBurst: 20,
      authFailAddresses: 10_000,
      trustProxy: [],
    });
    expect(() => loadConfig({ MAINLINE_AUTH_FAIL_LIMIT: '-1' })).toThrow(
      'MAINLINE_AUTH_FAIL_LIMIT must be a whole number from 0 to 1000000, got "-1"',
    );
  });
});
