// Where the DTLS guards (dtls-server-guard.ts, dtls-client-guard.ts) attach: to the werift
// DtlsServer or DtlsClient a transport creates when it starts in the guard's role.
import type { RTCPeerConnection } from "werift";
import type { Logger } from "../../common/log.ts";

/** Roles whose guard found werift not as expected: warned about once per process. */
const skipReported = new Set<string>();

/**
 * Arms `wrap` on each DTLS transport of `pc` that becomes `role`. werift creates the DtlsServer or
 * DtlsClient synchronously right after the transport's state turns "connecting", before any
 * datagram can reach it (a client sends its first ClientHello 100 ms later), so a microtask after
 * that state change is in time. The role must be set by then (shell/peer.ts sets it right after
 * setRemoteDescription). A werift without a wrapped member is warned about on `log`, once per
 * process and role.
 */
export function armDtlsGuard(
  pc: RTCPeerConnection,
  role: "server" | "client",
  wrap: (socket: unknown) => boolean,
  log?: Pick<Logger, "warn">,
): () => boolean {
  let guarded = false;
  for (const t of pc.dtlsTransports) {
    t.onStateChange.subscribe((state) => {
      if (state !== "connecting" || t.role !== role) return;
      queueMicrotask(() => {
        const ok = wrap((t as unknown as { dtls?: unknown }).dtls);
        guarded = ok || guarded;
        if (!ok && log && !skipReported.has(role)) {
          skipReported.add(role);
          const name = role === "server" ? "DtlsServer" : "DtlsClient";
          log.warn(`werift's ${name} is not the shape the DTLS ${role} guard wraps; unguarded`, {});
        }
      });
    });
  }
  return () => guarded;
}
