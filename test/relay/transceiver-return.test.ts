// A transceiver dies and comes back on the same port (a supervisor restart): the relay that owns
// the connected socket to it sees it down, hears it again, marks it up, and frames reach it again.
// On the batched path the kernel's ECONNREFUSED (ICMP port unreachable) on that socket used to
// leave it deaf for good: the pongs of the restarted transceiver were never read.
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { FrameType } from "../../shared/backbone/frame.ts";
import { bindingRequest, hint, rtp } from "./fixtures.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology, until } from "./harness.ts";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Line {
  msg: string;
  transceiverId?: number;
  reason?: string;
}

describe.each([
  { where: "cluster relay", colocated: false },
  { where: "co-located POP", colocated: true },
])("a transceiver that dies and comes back on the same port ($where)", ({ colocated }) => {
  it("is seen down, then up again, and frames reach it again", async () => {
    const lines: Line[] = [];
    const log = createLogger({ test: "relay" }, "info", (l) => lines.push(JSON.parse(l) as Line));
    const said = (msg: string) => lines.find((l) => l.msg === msg && l.transceiverId === 1);
    const p = await ports();
    const topo = topology(p, { colocated });
    let t = await FakeTransceiver.start();
    const port = t.sock.address().port;
    const transceivers: [number, string][] = [[1, t.address]];
    if (!colocated) {
      const cluster = await RelayWorker.start(relayConfig("cluster", topo, { transceivers }), log);
      cleanup.push(() => cluster.close());
    }
    const pop = await RelayWorker.start(relayConfig("pop", topo, colocated ? { transceivers } : {}), log);
    cleanup.push(() => pop.close());
    const a = await Client.open();
    cleanup.push(() => a.close());
    a.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => a.inbox.length === 1, "binding success before the death");

    // Killed: the client's media and the relay's pings now meet a closed port.
    await t.close();
    let seq = 0;
    const media = setInterval(() => a.send(rtp(200, seq++), p.vip), 20);
    try {
      await until(() => said("transceiver down"), "the transceiver to be seen down");
    } finally {
      clearInterval(media);
    }
    // At once, from the kernel's refusal, not after the silence.
    expect(said("transceiver down")?.reason).toBe("connection_refused");

    // Restarted on the same port: its pongs are heard on the same connected socket.
    t = await FakeTransceiver.start(port);
    cleanup.push(() => t.close());
    await until(() => said("transceiver up"), "the transceiver to be heard again");

    // A new call reaches it and its answer comes back.
    const b = await Client.open();
    cleanup.push(() => b.close());
    b.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => b.inbox.length === 1, "binding success after the return");
    expect(t.seen.find((f) => f.clientPort === b.port)).toMatchObject({
      type: FrameType.data,
      transceiverId: 1,
    });
  });
});
