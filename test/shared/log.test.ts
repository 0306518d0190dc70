// shared/log through both adapters (regional/common/log.ts on Node, edge/log.ts in the isolate):
// JSON lines, levels, child loggers, address redaction.
import { describe, expect, it } from "vitest";
import { createLogger as createEdgeLogger, redactIp } from "../../edge/log.ts";
import { createLogger, redactAddress } from "../../regional/common/log.ts";
import { createJsonLogger } from "../../shared/log/logger.ts";

function capture(level: "debug" | "info" | "warn" | "error" = "info") {
  const lines: string[] = [];
  const log = createLogger({ service: "relay", pop: 1 }, level, (l) => lines.push(l));
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("createLogger", () => {
  it("writes one JSON object per line with ts, level, msg, base and fields", () => {
    const { log, lines, records } = capture();
    log.info("ready", { port: 3478 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    const [r] = records();
    expect(r).toMatchObject({ level: "info", msg: "ready", service: "relay", pop: 1, port: 3478 });
    expect(new Date(r!.ts as string).toISOString()).toBe(r!.ts);
  });

  it("drops records below the level", () => {
    const { log, records } = capture("warn");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(records().map((r) => r.level)).toEqual(["warn", "error"]);
  });

  it("child loggers add fields and keep the level and writer", () => {
    const { log, records } = capture("info");
    const child = log.child({ cluster: 2 });
    child.debug("hidden");
    child.warn("w", { reason: "x" });
    expect(records()).toEqual([
      expect.objectContaining({ msg: "w", service: "relay", pop: 1, cluster: 2, reason: "x" }),
    ]);
  });

  it("serialises errors as name and message (no stack)", () => {
    const { log, records } = capture();
    log.error("failed", { err: new TypeError("boom") });
    expect(records()[0]!.err).toEqual({ name: "TypeError", message: "boom" });
  });
});

describe("redactAddress", () => {
  it.each([
    ["203.0.113.7", "203.0.113.0/24"],
    ["203.0.113.7:54321", "203.0.113.0/24"],
    ["2001:db8:1234:5678::1", "2001:db8:1234::/48"],
    ["[2001:db8:1234:5678::1]:443", "2001:db8:1234::/48"],
    ["::ffff:198.51.100.9", "198.51.100.0/24"],
    ["[::ffff:198.51.100.9]:9", "198.51.100.0/24"],
    ["::1", "::/48"],
    ["not an address", "redacted"],
    ["1.2.3.4:5:6", "redacted"],
    ["", "redacted"],
  ])("%s → %s", (input, expected) => expect(redactAddress(input)).toBe(expected));

  it("never returns the host part of an address", () => {
    for (const a of [
      "10.1.2.3:4000",
      "[2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff]:1",
      "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff",
    ]) {
      const r = redactAddress(a);
      expect(r).not.toMatch(/\.3\b|bbbb|ffff|4000/);
    }
  });
});

describe("one logger for every runtime", () => {
  it("takes its clock from the adapter (the shared core reads none)", () => {
    const lines: string[] = [];
    const log = createJsonLogger({
      base: { svc: "t" },
      level: "info",
      write: (l) => lines.push(l),
      now: () => 0,
    });
    log.info("at epoch");
    expect(JSON.parse(lines[0]!)).toEqual({
      ts: "1970-01-01T00:00:00.000Z",
      level: "info",
      msg: "at epoch",
      svc: "t",
    });
  });

  it("the edge adapter writes the same records, tagged svc=edge, and treats an unknown level as info", () => {
    const lines: string[] = [];
    const log = createEdgeLogger("loud", (l) => lines.push(l));
    log.debug("hidden");
    log.child({ route: "calls.create" }).info("served", { status: 201 });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: "info",
        msg: "served",
        svc: "edge",
        route: "calls.create",
        status: 201,
      }),
    ]);
  });

  it("the edge redacts client addresses as the regional services do", () => {
    expect(redactIp("203.0.113.77")).toBe(redactAddress("203.0.113.77"));
    expect(redactIp("2001:db8:1234:5678::1")).toBe("2001:db8:1234::/48");
    expect(redactIp(null)).toBe("unknown");
    expect(redactIp("not an ip")).toBe("redacted");
  });
});
