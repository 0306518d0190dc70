// A reader that stops reading: the POP queues at most RELAY_TCP_WRITE_BUFFER bytes toward it,
// drops its packets beyond that (backpressure), and disconnects it once it stayed full for
// RELAY_TCP_STALL_MS; another client on the same POP loses nothing meanwhile.
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_TCP_LIMITS } from "../../regional/relay/shell/tcp-limits.ts";
import { bindingRequest, dtls, hint, rtp } from "../relay/fixtures.ts";
import { metric, TcpClient, type TcpPath, tcpPath, until } from "./support.ts";

let path: TcpPath | null = null;
const clients: TcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await path?.close();
  path = null;
});

describe("a slow reader over ICE-TCP", () => {
  it("loses its own packets, then its connection; nobody else's", async () => {
    path = await tcpPath({ tcp: { ...DEFAULT_TCP_LIMITS, writeBufferBytes: 16_384, stallMs: 1_000 } });
    const { pop } = path;
    const slow = await TcpClient.connect(path.vipTcp);
    const good = await TcpClient.connect(path.vipTcp);
    clients.push(slow, good);
    for (const c of [slow, good]) c.send(bindingRequest(hint(1, 1)));
    await until(() => slow.inbox.length === 1 && good.inbox.length === 1, "both answered");
    slow.socket.pause(); // stops reading: the kernel buffers fill, then the POP's queue
    const drops = () =>
      metric(pop.metricsText(), 'gr_relay_transport_drops_total{transport="tcp",reason="backpressure"}');
    // The slow client keeps sending (the echo comes back at it) while the good one talks.
    // It goes on sending until the POP gives up on it (a paused socket never sees the close).
    const stalled = () =>
      metric(pop.metricsText(), 'gr_relay_tcp_closed_total{transport="tcp",reason="stalled"}');
    let seq = 0;
    const big = dtls(2_000);
    const end = Date.now() + 30_000;
    while (stalled() === 0 && Date.now() < end) {
      for (let i = 0; i < 50; i++) slow.send(big);
      good.send(rtp(160, seq++));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(drops()).toBeGreaterThan(0);
    expect(stalled()).toBe(1);
    await until(
      () => metric(pop.metricsText(), 'gr_relay_tcp_connections{transport="tcp"}') === 1,
      "only the good connection left",
    );
    for (let i = 0; i < 200; i++) good.send(rtp(160, seq++));
    await until(
      () => good.inbox.length === 1 + seq,
      () => `all ${seq} echoes at the good client (${good.inbox.length - 1})`,
    );
    expect(good.closed).toBe(false);
  }, 60_000);
});
