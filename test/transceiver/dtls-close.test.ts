// A hangup sends DTLS close_notify, so the client's DTLS transport (and a browser's
// connectionState) closes at once instead of waiting ~30 s for consent to fail. werift's own
// connectionState only says `closed` after its close(), so the DTLS transport is what is checked.
import { describe, expect, it } from "vitest";
import { startHarness, until } from "./helpers/harness.ts";

describe("hangup", () => {
  it("sends close_notify: the client's DTLS transport and connection close promptly", async () => {
    const h = await startHarness({ consentTimeoutMs: 60_000 });
    try {
      const { client, callId } = await h.connectClient();
      const other = await h.connectClient();
      const dtls = client.pc.dtlsTransports[0]!;
      expect(dtls.state).toBe("connected");
      const del = await h.call("DELETE", `/v1/calls/${callId}`);
      expect(del.status).toBe(204);
      // Without the alert the werift client would stay "connected" for the whole consent timeout.
      await until(() => dtls.state === "closed", "client DTLS closed by close_notify");
      // The other call on the same transceiver keeps its DTLS.
      expect(other.client.pc.dtlsTransports[0]!.state).toBe("connected");
    } finally {
      await h.close();
    }
  });
});
