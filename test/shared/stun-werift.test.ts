// Interop with werift (the transceiver's WebRTC stack): Binding requests built by werift's own
// STUN encoder read correctly with shared/stun, and ours parse and verify in werift.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classes, Message, methods, parseMessage } from "werift";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { verifyMessageIntegrity } from "../../shared/stun/integrity.ts";
import { isBindingRequest, newStunView, readStun } from "../../shared/stun/reader.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";

const iceChar = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
const ufrag = (min: number, max: number) =>
  fc.array(iceChar, { minLength: min, maxLength: max }).map((a) => a.join(""));
const check = fc.record({
  server: ufrag(4, 32),
  client: ufrag(4, 32),
  pwd: ufrag(22, 40),
  txid: fc.uint8Array({ minLength: 12, maxLength: 12 }),
  priority: fc.nat(0xffffffff),
  tieBreaker: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  useCandidate: fc.boolean(),
  controlling: fc.boolean(),
});

describe("werift → shared/stun", () => {
  it("reads werift's connectivity checks: USERNAME split, USE-CANDIDATE, MESSAGE-INTEGRITY, FINGERPRINT", () => {
    fc.assert(
      fc.property(check, (c) => {
        // as werift's Connection builds a check (ice.ts: buildRequest)
        const m = new Message(methods.BINDING, classes.REQUEST, Buffer.from(c.txid))
          .setAttribute("USERNAME", `${c.server}:${c.client}`)
          .setAttribute("PRIORITY", c.priority)
          .setAttribute(c.controlling ? "ICE-CONTROLLING" : "ICE-CONTROLLED", c.tieBreaker);
        if (c.useCandidate) m.setAttribute("USE-CANDIDATE", null);
        const bytes = new Uint8Array(m.addMessageIntegrity(Buffer.from(c.pwd)).addFingerprint().bytes);
        const view = newStunView();
        expect(readStun(bytes, bytes.length, view)).toBe("ok");
        expect(isBindingRequest(view)).toBe(true);
        const text = new TextDecoder();
        expect(text.decode(bytes.subarray(view.usernameOffset, view.colonOffset))).toBe(c.server);
        expect(
          text.decode(bytes.subarray(view.colonOffset + 1, view.usernameOffset + view.usernameLength)),
        ).toBe(c.client);
        expect(view.useCandidate).toBe(c.useCandidate);
        expect(view.hasFingerprint).toBe(true);
        expect(verifyMessageIntegrity(bytes, view, new TextEncoder().encode(c.pwd), hmacSha1)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe("shared/stun → werift", () => {
  it("werift parses our Binding requests and verifies their MESSAGE-INTEGRITY and FINGERPRINT", () => {
    fc.assert(
      fc.property(check, (c) => {
        const bytes = encodeBindingRequest({
          transactionId: c.txid,
          username: `${c.server}:${c.client}`,
          password: c.pwd,
          hmacSha1,
          priority: c.priority,
          tieBreaker: c.tieBreaker,
          useCandidate: c.useCandidate,
          controlling: c.controlling,
        });
        const m = parseMessage(Buffer.from(bytes), Buffer.from(c.pwd));
        expect(m).toBeDefined();
        expect(m!.messageMethod).toBe(methods.BINDING);
        expect(m!.messageClass).toBe(classes.REQUEST);
        expect(m!.getAttributeValue("USERNAME")).toBe(`${c.server}:${c.client}`);
        expect(m!.getAttributeValue("PRIORITY")).toBe(c.priority);
        expect(m!.getAttributeValue(c.controlling ? "ICE-CONTROLLING" : "ICE-CONTROLLED")).toBe(c.tieBreaker);
        expect(m!.attributesKeys.includes("USE-CANDIDATE")).toBe(c.useCandidate);
        // and a wrong password fails in werift too
        expect(parseMessage(Buffer.from(bytes), Buffer.from(`${c.pwd}x`))).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
