// Configuration that works but is probably not what the operator meant, logged once at start:
// a wildcard bind without an advertised address, a socket buffer smaller than asked.
import type { Logger } from "../common/log.ts";
import type { IoMode } from "../common/native/index.ts";
import type { TransceiverConfig } from "./config.ts";

export function warnAtStart(
  config: TransceiverConfig,
  log: Logger,
  grantedBufferBytes: number,
  io: IoMode,
): void {
  const unspecified = (h: string) => h === "0.0.0.0" || h === "::";
  if (unspecified(config.udp.host) && !config.udpAdvertise) {
    log.warn(
      "TRANSCEIVER_UDP binds every address: set TRANSCEIVER_UDP_ADVERTISE to the address relays reach",
    );
  }
  if (unspecified(config.http.host) && !config.httpAdvertise) {
    log.warn(
      "TRANSCEIVER_HTTP binds every address: set TRANSCEIVER_HTTP_ADVERTISE to the URL the gateway reaches",
    );
  }
  const c = config.conference;
  if (c && unspecified(c.bind.host) && !c.advertise) {
    log.warn(
      "the conference socket binds every address: set TRANSCEIVER_CONFERENCE_ADDR to the address other transceivers reach",
    );
  }
  if (config.connectRelays && io === "batch") {
    log.warn(
      "TRANSCEIVER_CONNECT_RELAYS applies to dgram I/O only: the batched path sends to parsed addresses",
    );
  }
  if (grantedBufferBytes < config.socketBufferBytes) {
    log.warn("backbone socket receive buffer is smaller than asked: raise net.core.rmem_max", {
      askedBytes: config.socketBufferBytes,
      grantedBytes: grantedBufferBytes,
    });
  }
}
