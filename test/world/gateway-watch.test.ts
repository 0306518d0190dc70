// The world's wait for gateways after a transceiver restart, fed the gateways' own log lines.
import { describe, expect, it } from "vitest";
import { GatewayWatch } from "../../scripts/world/gateway-watch.ts";

const line = (msg: string, id: number) =>
  JSON.stringify({ ts: "2026-12-02T00:00:00.000Z", level: "info", msg, svc: "gateway", transceiverId: id });

describe("GatewayWatch", () => {
  it("settles once every transceiver a gateway marked down is up again", async () => {
    const w = new GatewayWatch();
    w.line("fra-gateway", line("transceiver down", 1));
    w.line("iad-gateway", line("transceiver down", 1));
    w.line("fra-relay", line("transceiver up", 1)); // not a gateway: ignored
    setTimeout(() => w.line("fra-gateway", line("transceiver up", 1)), 300);
    setTimeout(() => w.line("iad-gateway", line("transceiver up", 1)), 1500);
    const t0 = Date.now();
    await w.settled(5000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
  });

  it("names what is still down when it gives up", async () => {
    const w = new GatewayWatch();
    w.line("fra-gateway", line("transceiver down", 2));
    w.line("fra-gateway", 'not json, "transceiver up"');
    await expect(w.settled(1500)).rejects.toThrow(/fra-gateway\/2/);
  });
});
