// UDP sockets for the data path: SO_REUSEPORT where several workers share a port, large kernel
// buffers, and a synchronous address "lookup" (every destination is an IP literal) so an
// unconnected send goes out in the same tick instead of after a dns.lookup nextTick.
import dgram from "node:dgram";
import { parseHostPort } from "../../../shared/topology/address.ts";
import { unsharedUdpPort } from "../../common/reuse-port.ts";

type LookupCb = (err: Error | null, address: string, family: number) => void;
const literalLookup = (host: string, family: unknown, cb: LookupCb): void => {
  cb(null, host, typeof family === "number" ? family : host.includes(":") ? 6 : 4);
};

export interface UdpOptions {
  host: string;
  port: number;
  reusePort: boolean;
  bufferBytes: number;
}

export function isV6Host(host: string): boolean {
  return host.includes(":");
}

/** Binds a socket; resolves once listening. */
export async function bindUdp(o: UdpOptions): Promise<dgram.Socket> {
  const port = o.reusePort && o.port === 0 ? await unsharedUdpPort(o.host) : o.port;
  const sock = dgram.createSocket({
    type: isV6Host(o.host) ? "udp6" : "udp4",
    reusePort: o.reusePort,
    recvBufferSize: o.bufferBytes,
    sendBufferSize: o.bufferBytes,
    lookup: literalLookup as unknown as dgram.SocketOptions["lookup"],
  });
  return new Promise((resolve, reject) => {
    const onError = (e: Error): void => reject(e);
    sock.once("error", onError);
    sock.bind({ port, address: o.host, exclusive: true }, () => {
      sock.off("error", onError);
      resolve(sock);
    });
  });
}

/** A socket bound to `localHost:0` and connected to `remote` ("ip:port"). */
export async function connectUdp(
  localHost: string,
  remote: string,
  bufferBytes: number,
): Promise<dgram.Socket> {
  const hp = parseHostPort(remote);
  if (typeof hp === "string") throw new RangeError(`upstream address: ${hp}`);
  const sock = await bindUdp({ host: localHost, port: 0, reusePort: false, bufferBytes });
  await new Promise<void>((resolve, reject) => {
    sock.connect(hp.port, hp.host, (err?: Error) => (err ? reject(err) : resolve()));
  });
  return sock;
}

export function closeUdp(sock: dgram.Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      sock.close(() => resolve());
    } catch {
      resolve();
    }
  });
}

export function formatAddress(sock: dgram.Socket): string {
  const a = sock.address();
  return a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}
