// Port 0 with SO_REUSEPORT is not a free port. Linux's ephemeral pick skips only the ports it could
// not share, so it may hand out a port that another SO_REUSEPORT socket of the same user already
// holds, and the two then split each other's datagrams (measured: 168 repeats in 3,000 such binds).
// Node's dgram cannot set SO_REUSEPORT after bind (the addon does, batch_udp.c), so a shared
// socket asked for port 0 first takes a port from a plain bind, which nobody can be holding.
import { createSocket } from "node:dgram";

/** A UDP port on `host` that no socket held a moment ago, for sockets that share it by SO_REUSEPORT. */
export async function unsharedUdpPort(host: string): Promise<number> {
  const probe = createSocket(host.includes(":") ? "udp6" : "udp4");
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.bind({ port: 0, address: host, exclusive: true }, () => resolve());
    });
    return probe.address().port;
  } finally {
    await new Promise<void>((r) => probe.close(() => r()));
  }
}
