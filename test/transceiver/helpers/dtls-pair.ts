// A werift DtlsClient and DtlsServer (the server asks for the client's certificate, as the
// transceiver's does) over two datagram ends the test wires together: the DTLS guard tests'
// handshakes without sockets.
import { DtlsClient, DtlsServer, RTCDtlsTransport } from "werift";

/** One side of an in-memory datagram pipe, as werift's DTLS sockets use their transport. */
export interface End {
  onData?: (buf: Buffer) => void;
  send(buf: Buffer): Promise<void>;
  close(): void;
}

export async function dtlsPair(ends: {
  client: End;
  server: End;
}): Promise<{ client: DtlsClient; server: DtlsServer }> {
  const cert = await RTCDtlsTransport.SetupCertificate();
  const opts = {
    cert: cert.certPem,
    key: cert.privateKey,
    signatureHash: cert.signatureHash,
    srtpProfiles: [1 as const],
    extendedMasterSecret: true,
  };
  return {
    server: new DtlsServer({ ...opts, transport: ends.server as never, certificateRequest: true }),
    client: new DtlsClient({ ...opts, transport: ends.client as never }),
  };
}
