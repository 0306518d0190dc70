import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../../shared/config/env-reader.ts";

describe("EnvReader", () => {
  it("collects every problem, each naming its variable, and throws them at once", () => {
    const r = new EnvReader({ A: "x", B: "70000", URL: "ftp://h/", ADDR: "nowhere" }, "test");
    r.int("A", 1, 10, 5);
    r.int("B", 1, 65535);
    r.int("MISSING", 1, 9);
    r.url("URL", "http://d/", /^https?:$/);
    r.hostPort("ADDR");
    expect(r.problems).toEqual([
      'A: must be an integer 1-10, got "x"',
      'B: must be an integer 1-65535, got "70000"',
      "MISSING: required (an integer 1-9)",
      "URL: scheme ftp: is not allowed",
      expect.stringMatching(/^ADDR: /),
    ]);
    expect(() => r.done()).toThrow(ConfigError);
    try {
      r.done();
    } catch (e) {
      expect((e as Error).message).toMatch(/^invalid test configuration:\n {2}A: /);
      expect((e as ConfigError).problems).toHaveLength(5);
    }
  });

  it("reads numbers from Workers vars and trims strings; empty means unset", () => {
    const r = new EnvReader({ N: 42, S: "  v  ", E: "", F: "2.5" });
    expect(r.int("N", 1, 100)).toBe(42);
    expect(r.str("S")).toBe("v");
    expect(r.optional("E")).toBeUndefined();
    expect(r.int("E", 1, 100, 7)).toBe(7);
    expect(r.num("F", 0, 10, 1)).toBe(2.5);
    expect(r.hostPort("H", "127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0, ipv6: false });
    r.done();
  });

  it("never echoes a secret, in either base64 alphabet", () => {
    const secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA";
    const r = new EnvReader({ OK: `${secret}==`, URLSAFE: "-_-_", SHORT: "c2hvcnQ=", BAD: "not base64!" });
    expect(r.secret("OK", 32)).toHaveLength(34);
    expect(r.secret("URLSAFE", 1)).toEqual(new Uint8Array([0xfb, 0xff, 0xbf]));
    r.secret("SHORT", 32);
    r.secret("BAD", 32);
    r.secret("NONE", 32);
    expect(r.problems).toEqual([
      "SHORT: has 5 bytes, at least 32 are required",
      "BAD: not base64",
      "NONE: required (base64, at least 32 bytes)",
    ]);
    expect(r.problems.join()).not.toContain("c2hvcnQ");
  });
});
