// The golden vectors: scripts/wire-vectors.ts must reproduce the committed fixture and the block
// in docs/wire-formats.md exactly. A codec change that alters any byte fails here; after an
// intended format change run `node scripts/wire-vectors.ts --write` and review the diff.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { DOC_PATH, docBlock, renderMarkdown, wireVectors } from "../../scripts/wire-vectors.ts";
import { verifyMessageIntegrity } from "../../shared/stun/integrity.ts";
import { newStunView, readStun } from "../../shared/stun/reader.ts";
import { ascii, committedVectors, fromHex } from "./helpers.ts";

describe("golden vectors", async () => {
  const generated = await wireVectors();

  it("the generator reproduces test/fixtures/wire-vectors.json", () => {
    expect(generated).toEqual(committedVectors());
  });

  it("docs/wire-formats.md carries the generated block verbatim", () => {
    const doc = readFileSync(DOC_PATH, "utf8");
    expect(docBlock(doc)).toBe(renderMarkdown(committedVectors()));
  });

  it("the STUN vector reads back with the stated offsets and verifies with its ice-pwd", () => {
    const s = committedVectors().stun;
    const m = fromHex(s.messageHex);
    const view = newStunView();
    expect(readStun(m, m.length, view)).toBe("ok");
    expect([
      view.usernameOffset,
      view.usernameLength,
      view.colonOffset,
      view.messageIntegrityOffset,
      view.fingerprintOffset,
    ]).toEqual([
      s.usernameOffset,
      s.usernameLength,
      s.colonOffset,
      s.messageIntegrityOffset,
      s.fingerprintOffset,
    ]);
    expect(
      new TextDecoder().decode(m.subarray(view.usernameOffset, view.usernameOffset + view.usernameLength)),
    ).toBe(s.username);
    expect(verifyMessageIntegrity(m, view, ascii(s.password), hmacSha1)).toBe(true);
    expect(view.useCandidate).toBe(s.useCandidate);
  });
});
