// Helpers of the system tests: port probes and polling.
import { createSocket } from "node:dgram";
import { createServer } from "node:net";

export { waitFor } from "../support/wait.ts";

/** True when nothing holds `port` (TCP listen or UDP bind succeeds). */
export function portFree(kind: "tcp" | "udp", host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    if (kind === "tcp") {
      const s = createServer();
      s.once("error", () => res(false));
      s.listen(port, host, () => s.close(() => res(true)));
    } else {
      const s = createSocket("udp4");
      s.once("error", () => res(false));
      s.bind(port, host, () => s.close(() => res(true)));
    }
  });
}
