// Where a company's webhooks may go (docs/integrations.md, SSRF): an `https`
// URL whose host resolves only to public addresses, checked when an endpoint
// is saved and again right before every send (DNS can change). Hosts listed
// in WEBHOOK_ALLOWED_HOSTS skip the address check and may use plain `http`
// (the local stack lists 127.0.0.1 and localhost, for its own receivers).
// Names are resolved with getaddrinfo (node:dns lookup), as the connection
// itself resolves them, /etc/hosts included.
import { lookup } from "node:dns/promises";

export class WebhookUrlError extends Error {}

/** The hosts of WEBHOOK_ALLOWED_HOSTS, lower case, IPv6 without brackets. */
export function allowedHosts(setting: string | undefined): ReadonlySet<string> {
  return new Set(
    (setting ?? "").split(",").map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1")).filter(Boolean),
  );
}

function ipv4Parts(address: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** Private, loopback, link-local (169.254.169.254, the metadata service, too), shared, reserved or multicast. */
function ipv4IsPublic([a, b, c]: number[]): boolean {
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false; // this network, private, loopback, multicast+
  if (a === 100 && b >= 64 && b <= 127) return false; // carrier-grade NAT
  if (a === 169 && b === 254) return false; // link-local, cloud metadata
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF protocol assignments, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  return true;
}

/** The 8 groups of an IPv6 address (an embedded dotted IPv4 tail included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const v4 = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(text);
  if (v4) {
    const parts = ipv4Parts(v4[1]);
    if (!parts) return null;
    text = text.slice(0, -v4[1].length) + `${((parts[0] << 8) | parts[1]).toString(16)}:` +
      ((parts[2] << 8) | parts[3]).toString(16);
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === "" ? [] : s.split(":"));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/** Whether an address (IPv4 or IPv6 text) is one the Internet routes to someone else: not ours, not special. */
export function isPublicAddress(address: string): boolean {
  const v4 = ipv4Parts(address);
  if (v4) return ipv4IsPublic(v4);
  const g = ipv6Groups(address);
  if (!g) return false;
  const embedded = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  if (g.slice(0, 6).every((x) => x === 0)) return false;
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d (SIIT) and NAT64 64:ff9b::a.b.c.d: the IPv4
  // address decides.
  const mapped = g.slice(0, 4).every((x) => x === 0) &&
    ((g[4] === 0 && g[5] === 0xffff) || (g[4] === 0xffff && g[5] === 0));
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (mapped || nat64) return ipv4IsPublic(embedded(g[6], g[7]));
  // The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215): a translator of the network's own, which may reach its
  // private addresses, whatever the suffix.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return false;
  if (g[0] === 0x2002) return ipv4IsPublic(embedded(g[1], g[2])); // 6to4
  if ((g[0] & 0xfe00) === 0xfc00) return false; // unique local fc00::/7
  if ((g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0) return false; // link-local, site-local
  if ((g[0] & 0xff00) === 0xff00) return false; // multicast
  if (g[0] === 0x2001 && g[1] === 0x0db8) return false; // documentation
  if (g[0] === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return false; // discard
  if (g[0] === 0x2001 && g[1] < 0x200) return false; // Teredo and other IETF assignments
  return true;
}

export type Resolve = (host: string) => Promise<string[]>;

/** Every address the system resolver gives for `host`, as a connection would find them. */
export const resolveHost: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The URL when a webhook may be sent to it; WebhookUrlError saying why not
 * otherwise: not http(s), credentials in it, plain http or a host that is (or
 * resolves to) a private, loopback or link-local address, unless the host is
 * allowed; a name that does not resolve.
 */
export async function checkWebhookUrl(
  text: string,
  allowed: ReadonlySet<string>,
  resolve: Resolve = resolveHost,
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError("url is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new WebhookUrlError("url must be https");
  if (url.username || url.password) throw new WebhookUrlError("url must not carry credentials");
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (allowed.has(host)) return url;
  const literal = ipv4Parts(host) !== null || host.includes(":");
  // A name in a plain http URL is refused before it is looked up; an address is named for what it is.
  if (url.protocol !== "https:" && !literal) throw new WebhookUrlError("url must be https");
  let addresses: string[];
  if (literal) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new WebhookUrlError(`url's host ${host} does not resolve`);
    }
    if (addresses.length === 0) throw new WebhookUrlError(`url's host ${host} does not resolve`);
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused) {
    throw new WebhookUrlError(
      `url's host ${host} ${literal ? "is" : `resolves to ${refused}, which is`} a private, loopback, link-local ` +
        "or reserved address",
    );
  }
  if (url.protocol !== "https:") throw new WebhookUrlError("url must be https");
  return url;
}
