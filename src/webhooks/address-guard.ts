import dns from 'node:dns';
import net from 'node:net';

/*
 * SSRF protection: a webhook may not reach loopback, private, link-local (or otherwise
 * non-public: unspecified, carrier-grade NAT, multicast) addresses unless WEBHOOK_ALLOW_PRIVATE=true.
 * The URL's text is checked at registration; at delivery the host name is resolved again and the
 * address actually connected to is checked (guardedLookup), so a name that later resolves to 127.0.0.1
 * (DNS rebinding) is still refused.
 */
const blocked = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, IPv4-mapped v6 included) is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPrivateAddress(mapped[1] as string);
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) return blocked.check(address, 'ipv6');
  return true;
}

/** A URL's host without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

export class PrivateAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a loopback, private or link-local address`);
    this.name = 'PrivateAddressError';
  }
}

/**
 * The addresses a URL's host stands for (itself when it is an IP literal), refused when any is
 * private. A name that does not resolve (now) is let through: delivery checks it again.
 */
export async function checkPublicHost(url: URL): Promise<void> {
  const host = hostOf(url);
  const addresses = net.isIP(host) ? [host] : await dns.promises.lookup(host, { all: true, verbatim: true }).then((found) => found.map((a) => a.address), () => []);
  const refused = addresses.find(isPrivateAddress);
  if (refused !== undefined) throw new PrivateAddressError(host, refused);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request / the agent: resolves like dns.lookup, then refuses the connection
 * when any address found is private. Node calls it for host names only; IP literals are checked by
 * the caller (deliver.ts) before connecting.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, found) => {
    if (err) return callback(err, []);
    const refused = found.find((entry) => isPrivateAddress(entry.address));
    if (refused) return callback(Object.assign(new PrivateAddressError(hostname, refused.address), { code: 'EPRIVATEADDRESS' }), []);
    if (options.all) return callback(null, found);
    const first = found[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
