// Free ports for servers that cannot bind port 0 themselves (child processes told a port, or a
// topology written before the sockets exist). A port free a moment ago can be taken again, so
// tests bind port 0 directly wherever they can.
import { createSocket } from "node:dgram";
import { createServer } from "node:net";

export async function freeTcpPort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, host, () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function freeUdpPort(host = "127.0.0.1"): Promise<number> {
  const s = createSocket(host.includes(":") ? "udp6" : "udp4");
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.bind(0, host, () => resolve());
  });
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
