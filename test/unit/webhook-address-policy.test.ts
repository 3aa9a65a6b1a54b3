import type { LookupAddress } from 'node:dns';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AddressRefusedError,
  classifyAddress,
  pinnedLookup,
  REFUSED_RANGES,
  type Resolve,
  refusal,
  urlRefusal,
} from '../../src/app/webhooks-out/address-policy.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

// [address, kind, refused by default, refused with MAINLINE_WEBHOOK_ALLOW_PRIVATE=1]
const TABLE: readonly (readonly [string, string, boolean, boolean])[] = [
  ['8.8.8.8', 'public', false, false],
  ['2606:4700:4700::1111', 'public', false, false],
  ['::ffff:8.8.8.8', 'public', false, false],
  ['127.0.0.1', 'loopback', true, false],
  ['127.255.0.9', 'loopback', true, false],
  ['::1', 'loopback', true, false],
  ['::ffff:127.0.0.1', 'loopback', true, false],
  ['::ffff:7f00:1', 'loopback', true, false],
  ['::ffff:0:127.0.0.1', 'loopback', true, false],
  ['::127.0.0.1', 'loopback', true, false],
  ['64:ff9b::7f00:1', 'loopback', true, false],
  ['2002:7f00:1::', 'loopback', true, false],
  ['10.0.0.5', 'private', true, false],
  ['172.16.0.1', 'private', true, false],
  ['172.31.255.255', 'private', true, false],
  ['192.168.1.1', 'private', true, false],
  ['100.64.0.1', 'private', true, false],
  ['fc00::1', 'private', true, false],
  ['fd12:3456::1', 'private', true, false],
  ['::ffff:10.0.0.5', 'private', true, false],
  ['169.254.169.254', 'metadata', true, true],
  ['::ffff:169.254.169.254', 'metadata', true, true],
  ['::ffff:a9fe:a9fe', 'metadata', true, true],
  ['fd00:ec2::254', 'metadata', true, true],
  ['100.100.100.200', 'metadata', true, true],
  ['169.254.1.1', 'link-local', true, true],
  ['fe80::1', 'link-local', true, true],
  ['fe80::1%eth0', 'link-local', true, true],
  ['febf::1', 'link-local', true, true],
  ['0.0.0.0', 'unspecified', true, true],
  ['::', 'unspecified', true, true],
  ['::ffff:0.0.0.0', 'unspecified', true, true],
  ['255.255.255.255', 'broadcast', true, true],
  ['224.0.0.1', 'multicast', true, true],
  ['ff02::1', 'multicast', true, true],
  ['0.1.2.3', 'reserved', true, true],
  ['240.0.0.1', 'reserved', true, true],
  ['192.0.2.1', 'reserved', true, true],
  ['2001:db8::1', 'reserved', true, true],
  ['2001:0:4136:e378::1', 'reserved', true, true],
  ['not an address', 'reserved', true, true],
];

describe('webhook address policy', () => {
  it.each(TABLE)('%s is %s (refused: default %s, allow-private %s)', (ip, kind, byDefault, allowed) => {
    expect(classifyAddress(ip).kind).toBe(kind);
    expect(refusal(ip, false) !== null).toBe(byDefault);
    expect(refusal(ip, true) !== null).toBe(allowed);
  });

  it('says what an address is, and which IPv4 address an IPv6 form stands for', () => {
    expect(refusal('10.0.0.5', false)).toMatchObject({
      reason: '10.0.0.5 is a private address',
      allowable: true,
    });
    expect(refusal('::ffff:169.254.169.254', true)).toMatchObject({
      reason: '::ffff:169.254.169.254 (IPv4 169.254.169.254) is a cloud metadata address',
      allowable: false,
    });
  });

  const v4Octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const inV4 = (net: string, bits: number) =>
    v4Octets.map((random) => {
      const base = net.split('.').map(Number);
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
      const b = ((base[0]! << 24) | (base[1]! << 16) | (base[2]! << 8) | base[3]!) >>> 0;
      const r = ((random[0] << 24) | (random[1] << 16) | (random[2] << 8) | random[3]) >>> 0;
      const n = ((b & mask) | (r & ~mask)) >>> 0;
      return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
    });
  const hex16 = (bytes: number[]) =>
    Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16)).join(':');
  const v6Bytes = (ip: string): number[] => {
    const [head, tail] = ip.split('::') as [string, string | undefined];
    const part = (s: string | undefined) => (s ? s.split(':') : []);
    const groups = [...part(head)];
    const right = part(tail);
    if (tail !== undefined) groups.push(...Array(8 - groups.length - right.length).fill('0'), ...right);
    return groups.flatMap((g) => [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 255]);
  };
  const inV6 = (net: string, bits: number) =>
    fc.array(fc.nat(255), { minLength: 16, maxLength: 16 }).map((random) => {
      const base = v6Bytes(net);
      return hex16(
        base.map((b, i) => {
          const keep = Math.max(0, Math.min(8, bits - 8 * i));
          const mask = (0xff << (8 - keep)) & 0xff;
          return (b & mask) | (random[i]! & ~mask & 0xff);
        }),
      );
    });
  /** Every form a refused IPv4 address can take: itself, and the IPv6 forms that reach it. */
  const v4Forms = (ip: string) => {
    const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number];
    const hi = ((a << 8) | b).toString(16);
    const lo = ((c << 8) | d).toString(16);
    return [
      ip,
      `::ffff:${ip}`,
      `::ffff:${hi}:${lo}`,
      `::ffff:0:${ip}`,
      `64:ff9b::${hi}:${lo}`,
      `2002:${hi}:${lo}::1`,
    ];
  };

  it('refuses any address in a refused range, in any of its IPv4-mapped or embedded forms (property)', () => {
    const ranges = REFUSED_RANGES.flatMap(([kind, cidrs]) =>
      cidrs.map((cidr) => {
        const [net, bits] = cidr.split('/') as [string, string];
        return { kind, cidr, arb: net.includes(':') ? inV6(net, Number(bits)) : inV4(net, Number(bits)) };
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...ranges).chain((r) => fc.tuple(fc.constant(r), r.arb)),
        ([range, ip]) => {
          const forms = ip.includes(':') ? [ip] : v4Forms(ip);
          // Only loopback and private ranges may be let through, and nothing inside them that is
          // always refused (100.100.100.200 sits in 100.64/10, fd00:ec2::254 in fc00::/7).
          const allowable = range.kind === 'loopback' || range.kind === 'private';
          return forms.every(
            (form) =>
              refusal(form, false) !== null &&
              (allowable
                ? ['loopback', 'private', 'metadata'].includes(classifyAddress(form).kind)
                : refusal(form, true) !== null),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });

  const fakeResolve =
    (answers: Record<string, string[]>): Resolve =>
    async (hostname) => {
      const all = answers[hostname];
      if (all === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return all.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  const lookupAll = (lookup: ReturnType<typeof pinnedLookup>, host: string) =>
    new Promise<LookupAddress[]>((resolve, reject) =>
      lookup(host, { all: true }, (err, addresses) =>
        err ? reject(err) : resolve(addresses as LookupAddress[]),
      ),
    );
  const lookupOne = (lookup: ReturnType<typeof pinnedLookup>, host: string) =>
    new Promise<string>((resolve, reject) =>
      lookup(host, {}, (err, address) => (err ? reject(err) : resolve(address as string))),
    );

  it('hands the connection only the addresses it checked (a rebinding answer cannot slip through)', async () => {
    const resolve = fakeResolve({
      mixed: ['10.0.0.5', '127.0.0.1', '93.184.216.34', '169.254.169.254', '2606:4700::1'],
      internal: ['127.0.0.1', '::1'],
      metadata: ['169.254.169.254'],
    });
    const strict = pinnedLookup(false, resolve);
    expect(await lookupAll(strict, 'mixed')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
    expect(await lookupOne(strict, 'mixed')).toBe('93.184.216.34');
    await expect(lookupAll(strict, 'internal')).rejects.toThrow(
      new AddressRefusedError({
        address: '127.0.0.1',
        kind: 'loopback',
        allowable: true,
        reason: '127.0.0.1 is a loopback address',
      }),
    );
    await expect(lookupOne(strict, 'internal')).rejects.toThrow(
      'address not allowed: 127.0.0.1 is a loopback address',
    );
    const open = pinnedLookup(true, resolve);
    expect((await lookupAll(open, 'mixed')).map((a) => a.address)).toEqual([
      '10.0.0.5',
      '127.0.0.1',
      '93.184.216.34',
      '2606:4700::1',
    ]);
    await expect(lookupOne(open, 'metadata')).rejects.toThrow(
      'address not allowed: 169.254.169.254 is a cloud metadata address',
    );
    await expect(lookupOne(open, 'nowhere')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('at creation refuses literal IPs and names that resolve only to refused addresses, never for DNS trouble', async () => {
    const resolve = fakeResolve({ internal: ['127.0.0.1'], mixed: ['10.0.0.1', '8.8.8.8'] });
    const url = (s: string) => new URL(s);
    expect(await urlRefusal(url('http://127.0.0.1:9/x'), false, resolve)).toMatchObject({ kind: 'loopback' });
    expect(await urlRefusal(url('http://[::ffff:127.0.0.1]/'), false, resolve)).toMatchObject({
      kind: 'loopback',
    });
    expect(await urlRefusal(url('http://2130706433/'), false, resolve)).toMatchObject({ kind: 'loopback' });
    expect(await urlRefusal(url('http://127.0.0.1:9/x'), true, resolve)).toBeNull();
    expect(await urlRefusal(url('http://169.254.169.254/'), true, resolve)).toMatchObject({
      kind: 'metadata',
    });
    expect(await urlRefusal(url('https://internal/'), false, resolve)).toMatchObject({ kind: 'loopback' });
    expect(await urlRefusal(url('https://mixed/'), false, resolve)).toBeNull();
    expect(await urlRefusal(url('https://nowhere/'), false, resolve)).toBeNull();
    const unreachable: Resolve = () => new Promise(() => {});
    expect(await urlRefusal(url('https://slow.example/'), false, unreachable, 50)).toBeNull();
  });

  it('MAINLINE_WEBHOOK_ALLOW_PRIVATE is off by default, 1/true/0/false, and anything else is a ConfigError', () => {
    expect(loadConfig({}).webhookAllowPrivate).toBe(false);
    expect(loadConfig({ MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1' }).webhookAllowPrivate).toBe(true);
    expect(loadConfig({ MAINLINE_WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate).toBe(true);
    expect(loadConfig({ MAINLINE_WEBHOOK_ALLOW_PRIVATE: '0' }).webhookAllowPrivate).toBe(false);
    expect(() => loadConfig({ MAINLINE_WEBHOOK_ALLOW_PRIVATE: 'yes please' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAINLINE_WEBHOOK_ALLOW_PRIVATE: 'yes please' })).toThrow(
      /MAINLINE_WEBHOOK_ALLOW_PRIVATE must be 1 \(or true\).*got "yes please"/,
    );
  });
});
