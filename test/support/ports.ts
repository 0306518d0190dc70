// Free ports for servers that cannot bind port 0 themselves (child processes told a port, or a
// topology written before the sockets exist). A port free a moment ago can be taken again, so
// tests bind port 0 directly wherever they can.
import { createServer } from "node:net";
import { unsharedUdpPort } from "../../regional/common/reuse-port.ts";

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

/** A UDP port nobody held a moment ago (the probe the relay's shared sockets use for port 0). */
export const freeUdpPort = (host = "127.0.0.1"): Promise<number> => unsharedUdpPort(host);
