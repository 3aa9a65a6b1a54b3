// Which addresses an outgoing webhook may reach. A webhook URL is chosen by any token holder of an
// organization, so without this the server would POST (and retry) to anything it can reach: its own
// API, the cloud metadata service, the operator's internal network.
import { promises as dns } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export type AddressKind =
  | 'public'
  | 'metadata'
  | 'link-local'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'broadcast'
  | 'multicast'
  | 'reserved';

type RefusedKind = Exclude<AddressKind, 'public'>;

/** The kinds MAINLINE_WEBHOOK_ALLOW_PRIVATE lets through; every other refused kind is refused always. */
const ALLOWABLE: ReadonlySet<AddressKind> = new Set(['loopback', 'private']);

const DESCRIPTION: Record<RefusedKind, string> = {
  metadata: 'a cloud metadata address',
  'link-local': 'a link-local address',
  unspecified: 'the unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  reserved: 'a reserved (non-routable) address',
};

/** The refused ranges, by kind; the first kind whose ranges hold an address names it. */
export const REFUSED_RANGES: readonly (readonly [RefusedKind, readonly string[]])[] = [
  ['metadata', ['169.254.169.254/32', '100.100.100.200/32', 'fd00:ec2::254/128']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['unspecified', ['0.0.0.0/32', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7', 'fec0::/10']],
  ['broadcast', ['255.255.255.255/32']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  [
    'reserved',
    [
      '0.0.0.0/8',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4',
      '100::/64',
      '2001::/32', // Teredo: the IPv4 it reaches is obfuscated, so it cannot be checked
      '2001:db8::/32',
    ],
  ],
];

const LISTS: readonly (readonly [RefusedKind, BlockList])[] = REFUSED_RANGES.map(([kind, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/') as [string, string];
    list.addSubnet(net, Number(bits), net.includes(':') ? 'ipv6' : 'ipv4');
  }
  return [kind, list] as const;
});

/** Global unicast IPv6; anything outside it that no range above names is not a public address. */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** The 16 bytes of an IPv6 address (zone id ignored), or null when it is not one. */
function ipv6Bytes(ip: string): Uint8Array | null {
  let text = ip.replace(/%.*$/, '');
  if (isIP(text) !== 6) return null;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split(':'));
  const left = parse(head);
  const right = parse(tail);
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = Number.parseInt(g, 16);
    bytes[2 * i] = v >> 8;
    bytes[2 * i + 1] = v & 0xff;
  });
  return bytes;
}

const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
const v4 = (b: Uint8Array, at: number) => Array.from(b.subarray(at, at + 4)).join('.');

/**
 * The IPv4 address an IPv6 address stands for: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::).
 * A connection to these reaches (or may reach) that IPv4 address, so it is judged as that address.
 */
function embeddedIpv4(b: Uint8Array): string | null {
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(b, 12);
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zero(b, 10, 12)) return v4(b, 12);
  // ::/96 minus :: and ::1, which are IPv6's own unspecified and loopback addresses.
  if (zero(b, 0, 12) && !(zero(b, 12, 15) && (b[15] ?? 0) <= 1)) return v4(b, 12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12)) return v4(b, 12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b, 2);
  return null;
}

export interface AddressClass {
  readonly kind: AddressKind;
  /** The IPv4 address an IPv6 form embeds, when that is what was judged. */
  readonly embedded?: string;
}

function kindOf(ip: string, family: 'ipv4' | 'ipv6'): AddressKind {
  for (const [kind, list] of LISTS) if (list.check(ip, family)) return kind;
  if (family === 'ipv6' && !GLOBAL_UNICAST.check(ip, 'ipv6')) return 'reserved';
  return 'public';
}

/** What kind of address `ip` (an IPv4 or IPv6 literal) is; anything else counts as reserved. */
export function classifyAddress(ip: string): AddressClass {
  if (isIP(ip) === 4) return { kind: kindOf(ip, 'ipv4') };
  const bytes = ipv6Bytes(ip);
  if (bytes === null) return { kind: 'reserved' };
  const embedded = embeddedIpv4(bytes);
  if (embedded !== null) return { kind: kindOf(embedded, 'ipv4'), embedded };
  return { kind: kindOf(ip.replace(/%.*$/, ''), 'ipv6') };
}

export interface Refusal {
  readonly address: string;
  readonly kind: RefusedKind;
  /** True when MAINLINE_WEBHOOK_ALLOW_PRIVATE would let it through. */
  readonly allowable: boolean;
  /** e.g. "10.0.0.5 is a private address". */
  readonly reason: string;
}

/** Why a webhook may not connect to `ip`, or null when it may. */
export function refusal(ip: string, allowPrivate: boolean): Refusal | null {
  const { kind, embedded } = classifyAddress(ip);
  if (kind === 'public') return null;
  const allowable = ALLOWABLE.has(kind);
  if (allowable && allowPrivate) return null;
  const shown = embedded === undefined ? ip : `${ip} (IPv4 ${embedded})`;
  return { address: ip, kind, allowable, reason: `${shown} is ${DESCRIPTION[kind]}` };
}

/** A delivery's connection was refused by the address policy; its message is shown as last_error. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
  readonly code = 'EWEBHOOKADDRESS';
  constructor(readonly refused: Refusal) {
    super(`address not allowed: ${refused.reason}`);
  }
}

export type Resolved = readonly { readonly address: string; readonly family: number }[];
/** Every address a host name resolves to, the way connections resolve it (getaddrinfo). */
export type Resolve = (hostname: string) => Promise<Resolved>;
export const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** The host of a URL as an IP literal (IPv6 without brackets), or null when it is a name. */
export function literalHost(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? null : host;
}

/**
 * A `lookup` for http(s).request: resolves the name, drops every refused address and hands the
 * socket only checked ones, so the address connected to is the address checked (a DNS answer that
 * changes between a check and the connection cannot slip a refused address in). Literal IPs skip
 * lookups in node, so callers check those themselves (literalHost + refusal).
 */
export function pinnedLookup(allowPrivate: boolean, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const wanted = all.filter((a) => !family || a.family === family);
        const allowed = wanted.filter((a) => refusal(a.address, allowPrivate) === null);
        const first = allowed[0];
        if (first === undefined) {
          const refused =
            wanted.length > 0 ? refusal((wanted[0] as Resolved[number]).address, allowPrivate) : null;
          const err =
            refused !== null
              ? new AddressRefusedError(refused)
              : Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
          callback(err, '', 0);
        } else if (options.all) {
          callback(
            null,
            allowed.map((a) => ({ address: a.address, family: a.family })),
          );
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** How long endpoint creation waits for DNS before leaving the check to delivery time. */
const CREATE_RESOLVE_TIMEOUT_MS = 3_000;

/**
 * The refusal of a webhook URL at creation: a literal refused IP, or a name whose every address is
 * refused. A name that does not resolve (or not in time) passes: delivery checks again anyway.
 */
export async function urlRefusal(
  url: URL,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
  timeoutMs = CREATE_RESOLVE_TIMEOUT_MS,
): Promise<Refusal | null> {
  const literal = literalHost(url);
  if (literal !== null) return refusal(literal, allowPrivate);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), timeoutMs);
  });
  try {
    const all = await Promise.race([resolve(url.hostname).catch(() => null), timeout]);
    if (all === null || all.length === 0) return null;
    const refusals = all.map((a) => refusal(a.address, allowPrivate));
    return refusals.every((r) => r !== null) ? (refusals[0] ?? null) : null;
  } finally {
    clearTimeout(timer);
  }
}
