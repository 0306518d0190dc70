// Address parsing for the backbone frame and the topology: IPv4/IPv6 text ↔ bytes against Node's
// own parser and printer (net.isIPv4/isIPv6, SocketAddress = libuv inet_ntop), CIDR membership
// against net.BlockList, and host:port parsing.
import net from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatClientIp,
  formatIpv4,
  formatIpv6,
  parseIpv4,
  parseIpv6,
  readIpv4,
  writeIpv4,
} from "../../shared/backbone/address.ts";
import { cidrContains, parseCidr, parseHostPort } from "../../shared/topology/address.ts";

/** Strings that look like addresses (digits, hex, dots, colons), to probe the parsers' edges. */
const addressish = fc
  .array(fc.constantFrom(..."0123456789abcdefABCDEF.:%", "::", "1.2.3.4", "255", "0", "ffff"), {
    maxLength: 20,
  })
  .map((a) => a.join(""));

describe("IPv4", () => {
  it("parses exactly what net.isIPv4 accepts", () => {
    fc.assert(
      fc.property(fc.oneof(addressish, fc.ipV4(), fc.ipV4Extended(), fc.string()), (s) => {
        expect(parseIpv4(s) >= 0, JSON.stringify(s)).toBe(net.isIPv4(s));
      }),
      { numRuns: 5000 },
    );
  });
  it("parses from an offset exactly as it parses the rest of the text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.oneof(addressish, fc.ipV4(), fc.string()), (head, tail) => {
        expect(parseIpv4(head + tail, head.length)).toBe(parseIpv4(tail));
      }),
      { numRuns: 2000 },
    );
  });
  it.each(["1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.1"])("accepts %s", (s) => {
    expect(formatIpv4(parseIpv4(s))).toBe(s);
  });
  it.each([
    "01.2.3.4",
    "1.2.3.04",
    "256.0.0.1",
    "1.2.3",
    "1.2.3.4.5",
    "1..2.3",
    ".1.2.3",
    "1.2.3.",
    "1.2.3.4 ",
    "0x1.2.3.4",
    "",
  ])("rejects %j", (s) => expect(parseIpv4(s)).toBe(-1));
  it("u32 ↔ 16-byte form", () => {
    fc.assert(
      fc.property(fc.nat(0xffffffff), (n) => {
        const b = new Uint8Array(16).fill(7);
        writeIpv4(b, n);
        expect(b.subarray(0, 12).every((x) => x === 0)).toBe(true);
        expect(readIpv4(b)).toBe(n);
        expect(parseIpv4(formatIpv4(n))).toBe(n);
        expect(formatClientIp(b, false)).toBe(formatIpv4(n));
      }),
    );
  });
});

describe("IPv6", () => {
  it("parses exactly what net.isIPv6 accepts (zone ids included)", () => {
    fc.assert(
      fc.property(fc.oneof(addressish, fc.ipV6(), fc.string()), (s) => {
        expect(parseIpv6(s, new Uint8Array(16)), JSON.stringify(s)).toBe(net.isIPv6(s));
      }),
      { numRuns: 5000 },
    );
  });
  it.each([
    ["::", "::"],
    ["::1", "::1"],
    ["2001:DB8::1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["1:0:0:2:2:0:0:3", "1::2:2:0:0:3"],
    ["1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"],
    ["::ffff:192.0.2.1", "::ffff:192.0.2.1"],
    ["::ffff:c000:201", "::ffff:192.0.2.1"],
    ["::192.0.2.1", "::192.0.2.1"],
    ["fe80::1%eth0", "fe80::1"],
  ])("%s prints as %s", (input, printed) => {
    const b = new Uint8Array(16);
    expect(parseIpv6(input, b)).toBe(true);
    expect(formatIpv6(b)).toBe(printed);
  });
  it.each([
    "1.2.3.4::",
    "1.2.3.4::1",
    "::1.2.3.4:1",
    "1::2::3",
    ":1::",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "12345::",
    "::g",
    "",
  ])("rejects %j", (s) => expect(parseIpv6(s, new Uint8Array(16))).toBe(false));
  it("prints every address exactly as Node does (libuv inet_ntop, as dgram reports rinfo.address)", () => {
    const word = fc.oneof(
      fc.constant(0),
      fc.constant(0),
      fc.constant(0xffff),
      fc.constant(1),
      fc.nat(0xffff),
    );
    fc.assert(
      fc.property(fc.array(word, { minLength: 8, maxLength: 8 }), (words) => {
        const b = new Uint8Array(16);
        words.forEach((w, i) => {
          b[i * 2] = w >> 8;
          b[i * 2 + 1] = w & 255;
        });
        const text = formatIpv6(b);
        const node = new net.SocketAddress({
          address: words.map((w) => w.toString(16)).join(":"),
          family: "ipv6",
        });
        expect(text).toBe(node.address);
        const back = new Uint8Array(16);
        expect(parseIpv6(text, back)).toBe(true);
        expect(back).toEqual(b);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("CIDR", () => {
  it("parses v4 and v6 prefixes and names the problem otherwise", () => {
    expect(parseCidr("10.0.0.0/8")).toMatchObject({ ipv6: false, prefix: 8 });
    expect(parseCidr("2001:db8::/32")).toMatchObject({ ipv6: true, prefix: 32 });
    expect(parseCidr("10.0.0.0/33")).toBe("IPv4 prefix /33 is over 32");
    expect(parseCidr("::/129")).toBe("IPv6 prefix /129 is over 128");
    expect(parseCidr("10.0.0.0")).toBe('expected CIDR "ip/prefix", got "10.0.0.0"');
    expect(parseCidr("host/8")).toBe('"host" is not an IP address');
  });

  it("cidrContains agrees with net.BlockList", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.nat(128),
        (v6, netBytes, ipBytes, p) => {
          const prefix = v6 ? p : p % 33;
          if (!v6) {
            netBytes.fill(0, 0, 12);
            ipBytes.fill(0, 0, 12);
            // make membership likely half of the time
            if (p & 1) ipBytes.set(netBytes.subarray(12, 14), 12);
          } else if (p & 1) ipBytes.set(netBytes.subarray(0, 8));
          const netText = formatClientIp(netBytes, v6);
          const ipText = formatClientIp(ipBytes, v6);
          const c = parseCidr(`${netText}/${prefix}`);
          if (typeof c === "string") throw new Error(c);
          const list = new net.BlockList();
          list.addSubnet(netText, prefix, v6 ? "ipv6" : "ipv4");
          expect(cidrContains(c, v6, ipBytes)).toBe(list.check(ipText, v6 ? "ipv6" : "ipv4"));
          expect(cidrContains(c, !v6, ipBytes)).toBe(false); // families never mix
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("/0 contains everything of its family", () => {
    const c = parseCidr("0.0.0.0/0");
    if (typeof c === "string") throw new Error(c);
    const ip = new Uint8Array(16);
    writeIpv4(ip, parseIpv4("203.0.113.9"));
    expect(cidrContains(c, false, ip)).toBe(true);
  });
});

describe("parseHostPort", () => {
  it.each([
    ["127.0.0.1:3478", { host: "127.0.0.1", port: 3478, ipv6: false }],
    ["[::1]:443", { host: "::1", port: 443, ipv6: true }],
    ["[2001:db8::7]:65535", { host: "2001:db8::7", port: 65535, ipv6: true }],
  ])("%s", (text, expected) => expect(parseHostPort(text)).toEqual(expected));
  it.each([
    ["localhost:80", '"localhost" is not an IPv4 address'],
    ["1.2.3.4:0", "port 0 is outside 1-65535"],
    ["1.2.3.4:70000", "port 70000 is outside 1-65535"],
    ["1.2.3.4", 'expected "ip:port" or "[ipv6]:port", got "1.2.3.4"'],
    ["::1:80", 'expected "ip:port" or "[ipv6]:port", got "::1:80"'],
    ["[1.2.3.4]:80", '"1.2.3.4" is not an IPv6 address'],
  ])("%s → %s", (text, message) => expect(parseHostPort(text)).toBe(message));
});
