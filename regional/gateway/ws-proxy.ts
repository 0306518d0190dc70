// WebSocket upgrades (/v1/ws) are piped through to one transceiver, byte for byte. When that
// transceiver dies under a live socket, the client is told in the signalling protocol (an error
// event, then `ended`) and the socket closes with 1011 (server failure), not a bare TCP reset.
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { SIGNING_HEADERS } from "../../shared/signing/request.ts";
import { ApiError } from "../transceiver/errors.ts";
import type { Member } from "./members.ts";
import { FAILED_REASON } from "./routing.ts";
import { closeFrame, ServerStream, serverFrame } from "./ws-frames.ts";

export function rejectUpgrade(socket: Duplex, e: ApiError): void {
  const body = JSON.stringify(e.toJSON());
  socket.end(
    `HTTP/1.1 ${e.status} ${e.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${e.retryAfter ? `Retry-After: ${e.retryAfter}\r\n` : ""}Connection: close\r\n\r\n${body}`,
  );
}

const FAILED_EVENTS = [
  JSON.stringify({
    type: "error",
    error: {
      type: "server_error",
      code: FAILED_REASON,
      message: "the transceiver holding this call failed; the call ended",
    },
  }),
  JSON.stringify({ type: "ended", reason: FAILED_REASON }),
];

/** Pipes `socket` to member `m`; `onLost` runs when the member vanished under a live socket. */
export function pipeUpgrade(
  m: Member,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  signed: Record<string, string>,
  onLost: (m: Member) => void,
): void {
  const up = connect(Number(m.url.port || 80), m.url.hostname.replace(/^\[|\]$/g, ""));
  const seen = new ServerStream();
  let clientGone = false;
  socket.on("close", () => {
    clientGone = true;
    up.destroy();
  });
  up.on("error", () => {});
  up.on("data", (chunk: Buffer) => seen.feed(chunk));
  up.on("close", () => {
    if (clientGone) return;
    if (!seen.upgraded && !seen.broken) {
      // Never answered: the member is gone before the handshake.
      onLost(m);
      rejectUpgrade(socket, new ApiError("no_transceiver", "the transceiver did not answer", 2));
      return;
    }
    if (seen.closed || !seen.atBoundary) {
      socket.end();
      if (!seen.closed) socket.destroy();
      return;
    }
    onLost(m);
    for (const text of FAILED_EVENTS) socket.write(serverFrame(0x1, new TextEncoder().encode(text)));
    socket.end(closeFrame(1011, FAILED_REASON));
  });
  up.on("connect", () => {
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    const raw = req.rawHeaders;
    // The edge's signature was for this gateway: the transceiver gets one signed for itself.
    for (let i = 0; i < raw.length; i += 2) {
      if (!SIGNING_HEADERS.includes(raw[i]!.toLowerCase())) lines.push(`${raw[i]}: ${raw[i + 1]}`);
    }
    for (const [k, v] of Object.entries(signed)) lines.push(`${k}: ${v}`);
    up.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) up.write(head);
    socket.pipe(up);
    up.pipe(socket, { end: false });
  });
}
