// The minimal Node dgram forwarder (the ceiling for Node on this machine): every datagram received
// on LISTEN_PORT goes out unchanged on a socket connected to SINK_PORT. No table, no header.
// usage: node bench/relay/forwarder.ts LISTEN_PORT SINK_PORT
import dgram from "node:dgram";

const [listenPort, sinkPort] = process.argv.slice(2).map(Number) as [number, number];
const buf = 4 * 1024 * 1024;
const out = dgram.createSocket({ type: "udp4", sendBufferSize: buf });
const inp = dgram.createSocket({ type: "udp4", recvBufferSize: buf });
out.connect(sinkPort, "127.0.0.1", () => {
  inp.on("message", (msg) => out.send(msg));
  inp.bind(listenPort, "127.0.0.1", () => process.stdout.write('{"msg":"ready"}\n'));
});
process.on("SIGTERM", () => process.exit(0));
