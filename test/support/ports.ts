// Free ports for servers that cannot bind port 0 themselves (child processes told a port, or a
// topology written before the sockets exist). Tests bind port 0 directly wherever they can.
//
// A port is drawn at random below Linux's ephemeral range (32768-60999, which every port-0 bind in
// every test draws from), checked by a plain bind, and never handed out twice by one process. Two
// probes of port 0 in a row could return the same port (the first probe closed), and a port the
// kernel just gave a probe is soon given to someone else's port-0 socket: both made setups fail
// with EADDRINUSE or, worse, two sockets on one port (measured ~1.5 % of suite runs).
import { createSocket } from "node:dgram";
import { createServer } from "node:net";

const LOW = 20000;
const SPAN = 12000; // 20000-31999: below the ephemeral range, above the well-known and registered defaults we run
const handedOut = new Set<number>();

const canListen = (port: number, host: string): Promise<boolean> =>
  new Promise((res) => {
    const s = createServer();
    s.once("error", () => res(false));
    s.listen({ port, host, exclusive: true }, () => s.close(() => res(true)));
  });

const canBind = (port: number, host: string): Promise<boolean> =>
  new Promise((res) => {
    const s = createSocket(host.includes(":") ? "udp6" : "udp4");
    s.once("error", () => res(false));
    s.bind({ port, address: host, exclusive: true }, () => s.close(() => res(true)));
  });

async function pick(host: string, free: (port: number, host: string) => Promise<boolean>): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const port = LOW + Math.floor(Math.random() * SPAN);
    if (handedOut.has(port) || port === 3478) continue;
    handedOut.add(port); // taken even if the check fails: a busy port stays busy for this run
    if (await free(port, host)) return port;
  }
  throw new Error(`no free port in ${LOW}-${LOW + SPAN - 1} on ${host} after 500 tries`);
}

/** A TCP port nobody held a moment ago and this process never handed out before. */
export const freeTcpPort = (host = "127.0.0.1"): Promise<number> => pick(host, canListen);

/** A UDP port nobody held a moment ago and this process never handed out before. */
export const freeUdpPort = (host = "127.0.0.1"): Promise<number> => pick(host, canBind);
