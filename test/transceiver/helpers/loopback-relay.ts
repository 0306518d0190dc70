// Plays the relays in tests until regional/relay exists: clients send to a "VIP" socket, the
// relay wraps each datagram in a backbone frame (client ip:port in the header) and forwards it
// from its backbone socket to one transceiver; frames coming back are unwrapped and sent to the
// client from the VIP. It can also pretend a client's NAT mapping changed (remap) or that a
// client vanished (blackhole).
import { createSocket, type Socket } from "node:dgram";
import { formatIpv4, parseIpv4, readIpv4, writeIpv4 } from "../../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";

export interface LoopbackRelay {
  vip: { host: string; port: number };
  backbone: { host: string; port: number };
  /** Frames of type flowClose received, with the client address they named. */
  flowCloses: { address: string; reason: number }[];
  /** Present the client at realPort to the transceiver as apparentPort from now on. */
  remap(realPort: number, apparentPort: number): void;
  /** Drop everything to and from the client at realPort. */
  blackhole(realPort: number): void;
  /** Send raw bytes from the backbone socket to the transceiver (garbage tests). */
  sendRaw(bytes: Uint8Array): void;
  /** Send a frame with a custom header to the transceiver. */
  sendFrame(type: number, clientIp: string, clientPort: number, payload: Uint8Array): void;
  framesIn: number;
  pongs: Buffer[];
  /** Sees every datagram forwarded to a client (the payload, without the frame header); true drops it. */
  onToClient?: (payload: Buffer) => boolean | undefined;
  /** Sees every datagram from a client before it is framed; true drops it. */
  onFromClient?: (payload: Buffer) => boolean | undefined;
  close(): Promise<void>;
}

export interface LoopbackRelayOptions {
  transceiver: { host: string; port: number };
  clusterId: number;
  transceiverId: number;
  popId?: number;
}

async function bind(): Promise<Socket> {
  const s = createSocket({ type: "udp4", recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 });
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", r));
  return s;
}

export async function startLoopbackRelay(o: LoopbackRelayOptions): Promise<LoopbackRelay> {
  const vip = await bind();
  const bb = await bind();
  const popId = o.popId ?? 1;
  const toApparent = new Map<number, number>();
  const toReal = new Map<number, number>();
  const holes = new Set<number>();
  const hdr = newFrameHeader();
  const inHdr = newFrameHeader();
  const relay: LoopbackRelay = {
    vip: { host: "127.0.0.1", port: vip.address().port },
    backbone: { host: "127.0.0.1", port: bb.address().port },
    flowCloses: [],
    framesIn: 0,
    pongs: [],
    remap(realPort, apparentPort) {
      const old = toApparent.get(realPort);
      if (old !== undefined) toReal.delete(old);
      toApparent.set(realPort, apparentPort);
      toReal.set(apparentPort, realPort);
    },
    blackhole(realPort) {
      holes.add(realPort);
    },
    sendRaw(bytes) {
      bb.send(bytes, o.transceiver.port, o.transceiver.host);
    },
    sendFrame(type, clientIp, clientPort, payload) {
      const buf = Buffer.alloc(FRAME_HEADER_BYTES + payload.length);
      const h = newFrameHeader();
      h.type = type;
      h.popId = popId;
      h.clusterId = o.clusterId;
      h.transceiverId = o.transceiverId;
      h.clientPort = clientPort;
      writeIpv4(h.clientIp, parseIpv4(clientIp));
      encodeFrameHeader(buf, 0, h);
      buf.set(payload, FRAME_HEADER_BYTES);
      bb.send(buf, o.transceiver.port, o.transceiver.host);
    },
    async close() {
      await Promise.all([
        new Promise<void>((r) => vip.close(() => r())),
        new Promise<void>((r) => bb.close(() => r())),
      ]);
    },
  };
  vip.on("message", (msg, rinfo) => {
    if (holes.has(rinfo.port) || relay.onFromClient?.(msg) === true) return;
    const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + msg.length);
    hdr.type = FrameType.data;
    hdr.popId = popId;
    hdr.clusterId = o.clusterId;
    hdr.transceiverId = o.transceiverId;
    hdr.clientIpv6 = false;
    hdr.clientPort = toApparent.get(rinfo.port) ?? rinfo.port;
    writeIpv4(hdr.clientIp, parseIpv4(rinfo.address));
    encodeFrameHeader(buf, 0, hdr);
    msg.copy(buf, FRAME_HEADER_BYTES);
    bb.send(buf, o.transceiver.port, o.transceiver.host);
  });
  bb.on("message", (msg) => {
    relay.framesIn++;
    if (decodeFrameHeader(msg, msg.length, inHdr) !== "ok") return;
    const port = toReal.get(inHdr.clientPort) ?? inHdr.clientPort;
    const ip = formatIpv4(readIpv4(inHdr.clientIp));
    if (inHdr.type === FrameType.flowClose) {
      relay.flowCloses.push({ address: `${ip}:${inHdr.clientPort}`, reason: msg[FRAME_HEADER_BYTES] ?? 0 });
      return;
    }
    if (inHdr.type === FrameType.pong) {
      relay.pongs.push(msg.subarray(FRAME_HEADER_BYTES));
      return;
    }
    if (inHdr.type !== FrameType.data || holes.has(port)) return;
    if (relay.onToClient?.(msg.subarray(FRAME_HEADER_BYTES)) === true) return;
    vip.send(msg.subarray(FRAME_HEADER_BYTES), port, ip);
  });
  return relay;
}
