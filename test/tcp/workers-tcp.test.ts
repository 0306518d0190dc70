// ICE-TCP on a POP with two worker threads: both bind the TCP port (SO_REUSEPORT; a worker that
// could not would fail the start), the kernel spreads the 24 connections over them by 4-tuple, and
// each connection's replies come back to the worker that holds it (through that worker's own
// upstream sockets), so every connection gets exactly its own echo.
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { Relay } from "../../regional/relay/shell/relay.ts";
import { DEFAULT_TCP_LIMITS } from "../../regional/relay/shell/tcp-limits.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { bindingRequest, hint, rtp } from "../relay/fixtures.ts";
import { FakeTransceiver, ports, relayConfig, topology } from "../relay/harness.ts";
import { freeTcpPort } from "../support/ports.ts";
import { TcpClient, until } from "./support.ts";

const log = createLogger({ test: "tcp-workers" }, "error");
const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe("ICE-TCP with two POP worker threads", () => {
  it("every connection is answered on its own connection, on either worker", async () => {
    const p = await ports();
    const topo = topology(p);
    const vipTcp = await freeTcpPort();
    topo.pops[0]!.vipTcpPort = vipTcp;
    const t = await FakeTransceiver.start();
    cleanup.push(() => t.close());
    const cluster = await RelayWorker.start(
      relayConfig("cluster", topo, { transceivers: [[1, t.address]] }),
      log,
    );
    cleanup.push(() => cluster.close());
    // The per-source cap counts per worker, and the kernel's hash may put up to all 24 of these
    // connections (one source address) on one worker: with the default 16 a run fails now and then.
    const tcp = { ...DEFAULT_TCP_LIMITS, maxPerSource: 24 };
    const pop = await Relay.start(relayConfig("pop", topo, { workers: 2, tcp }), { threads: true, log });
    cleanup.push(() => pop.stop());
    const clients: TcpClient[] = [];
    for (let i = 0; i < 24; i++) {
      const c = await TcpClient.connect(vipTcp);
      cleanup.push(() => c.close());
      c.send(bindingRequest(hint(1, 1)));
      clients.push(c);
    }
    await until(() => clients.every((c) => c.inbox.length === 1), "every connection answered");
    for (const [i, c] of clients.entries()) c.send(rtp(100 + i, i));
    await until(() => clients.every((c) => c.inbox.length === 2), "every connection echoed");
    for (const [i, c] of clients.entries()) expect(c.inbox[1]!.length).toBe(100 + i);
    const text = await (await fetch(`http://${pop.addresses.admin}/metrics`)).text();
    expect(text).toMatch(/gr_relay_tcp_connections\{transport="tcp"\} 24/);
  }, 60_000);
});
