// Fuzzes the hot-path decoders with random and mutated datagrams (npm run fuzz; not part of npm test).
//
//   node scripts/fuzz.ts [--count 1000000] [--seconds 120] [--seed N]
//
// Every datagram goes through the RFC 7983 classifier, the STUN reader, the hint verifier (on the
// USERNAME's server ufrag and on a random 24-byte window) and the backbone frame decoder (and, when
// a frame decodes, the reader again on its payload). Invariants checked for each:
//   - nothing throws; every status is one of the documented ones
//   - the result depends only on buf[0..len): the same call on an exact-size copy agrees
//   - a STUN message read "ok" re-validates: isStun agrees, every offset lies inside the message,
//     the attribute at each offset has the right type, FINGERPRINT's CRC recomputes, USERNAME's ':'
//     is a ':', and reading again gives the same view
//   - a frame decoded "ok" re-encodes to the same 28 bytes
//   - no hint verifies "ok" unless it is one of the hints this script minted (no forgery by mutation)
// Conference frames (scripts/lib/fuzz-conference.ts): no throw, documented statuses, no forgery.
// Shared backend messages (scripts/lib/fuzz-shared.ts): no throw, documented statuses, ok records
// inside the message, the same walk on a copy, a message read whole re-encodes to itself.
// Prints counts by status, and every finding with its seed and input; exits 1 on any finding.
import { hmacSha1, nodeMac } from "../regional/common/hmac.ts";
import { parseIpv4, parseIpv6, writeIpv4 } from "../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../shared/backbone/frame.ts";
import { crc32 } from "../shared/bytes/crc32.ts";
import { HintVerifier, mintHint } from "../shared/hint/codec.ts";
import { HINT_CHARS, newHintFields } from "../shared/hint/layout.ts";
import { parseKeyring } from "../shared/keys.ts";
import { classifyDatagram, DATAGRAM_KIND_NAMES } from "../shared/stun/classify.ts";
import { isStun, newStunView, readStun, StunAttr, type StunView } from "../shared/stun/reader.ts";
import { encodeBindingRequest, encodeStunMessage } from "../shared/stun/writer.ts";
import { ConferenceFuzz } from "./lib/fuzz-conference.ts";
import { SharedFuzz } from "./lib/fuzz-shared.ts";

// ---- options -------------------------------------------------------------------------------
function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) {
    console.error(`--${name} needs a non-negative number`);
    process.exit(2);
  }
  return v;
}
const COUNT = option("count", 1_000_000);
const SECONDS = option("seconds", 120);
const SEED = option("seed", (Math.random() * 0x100000000) >>> 0) >>> 0;

// ---- deterministic PRNG (sfc32), so a finding replays with --seed ------------------------------
let sa = 0x9e3779b9;
let sb = 0x243f6a88;
let sc = 0xb7e15162;
let sd = SEED;
function rand32(): number {
  const t = (((sa + sb) | 0) + sd) | 0;
  sd = (sd + 1) | 0;
  sa = sb ^ (sb >>> 9);
  sb = (sc + (sc << 3)) | 0;
  sc = (sc << 21) | (sc >>> 11);
  sc = (sc + t) | 0;
  return t >>> 0;
}
for (let i = 0; i < 16; i++) rand32();
const below = (n: number): number => (n <= 0 ? 0 : rand32() % n);
const chance = (p: number): boolean => rand32() / 0x100000000 < p;
const randomBytes = (n: number): Uint8Array => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = rand32() & 255;
  return b;
};

// ---- seed corpus ---------------------------------------------------------------------------
const keyring = parseKeyring(
  `1:${Buffer.from(randomBytes(32)).toString("base64")},2:${Buffer.from(randomBytes(32)).toString("base64")}`,
  "FUZZ_KEYS",
  15,
);
const mac = nodeMac(keyring);
const minted = new Set<string>();
const corpus: Uint8Array[] = [];
const ufragChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const randomUfrag = (n: number): string => Array.from({ length: n }, () => ufragChars[below(64)]).join("");

for (let i = 0; i < 64; i++) {
  const hint = mintHint(
    { clusterId: below(0x10000), transceiverId: below(0x10000), random: randomBytes(4) },
    mac,
  );
  minted.add(hint);
  corpus.push(
    encodeBindingRequest({
      transactionId: randomBytes(12),
      username: `${hint}:${randomUfrag(4 + below(30))}`,
      ...(chance(0.8) ? { password: randomUfrag(22 + below(20)), hmacSha1 } : {}),
      useCandidate: chance(0.5),
      controlling: chance(0.5),
    }),
  );
}
// RFC 5769 §2.1 sample request and §2.2 response, a Binding success with XOR-MAPPED-ADDRESS
corpus.push(
  Buffer.from(
    "000100582112a442b7e7a701bc34d686fa87dfae802200105354554e20746573742063" +
      "6c69656e74002400046e0001ff80290008932ff9b151263b36000600096576746a3a" +
      "6836765920202000080014 9aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a280280004e57a3bcf".replace(/ /g, ""),
    "hex",
  ),
  Buffer.from(
    "0101003c2112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f7220" +
      "002000080001a147e112a643000800142b91f599fd9e90c38c7489f92af9ba53f06be7d7" +
      "80280004c07d4c96",
    "hex",
  ),
  encodeStunMessage({
    type: 0x0101,
    transactionId: randomBytes(12),
    attributes: [{ type: StunAttr.xorMappedAddress, value: randomBytes(8) }],
    fingerprint: true,
  }),
);
// Backbone frames around STUN, DTLS- and RTP-looking payloads, IPv4 and IPv6 clients
const frameHeader = newFrameHeader();
for (let i = 0; i < 64; i++) {
  frameHeader.type = [FrameType.data, FrameType.flowClose, FrameType.ping, FrameType.pong][below(4)]!;
  frameHeader.popId = below(0x10000);
  frameHeader.clusterId = below(0x10000);
  frameHeader.transceiverId = below(0x10000);
  frameHeader.clientPort = 1 + below(0xffff);
  frameHeader.clientIpv6 = chance(0.3);
  if (frameHeader.clientIpv6) parseIpv6("2001:db8::1", frameHeader.clientIp);
  else writeIpv4(frameHeader.clientIp, parseIpv4("203.0.113.7"));
  const payload =
    i % 3 === 0
      ? corpus[below(64)]!
      : i % 3 === 1
        ? Uint8Array.of(22, 0xfe, 0xfd, ...randomBytes(40))
        : Uint8Array.of(0x80, 111, ...randomBytes(60));
  const f = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  encodeFrameHeader(f, 0, frameHeader);
  f.set(payload, FRAME_HEADER_BYTES);
  corpus.push(f);
}

// Signed conference frames of every kind
const conference = new ConferenceFuzz(mac);
corpus.push(...conference.corpus(80, below, randomBytes));

// Shared backend connection messages (version 3: open, event, audio and close records)
const shared = new SharedFuzz();
corpus.push(...shared.corpus(40, below, randomBytes));

// ---- generators ------------------------------------------------------------------------------
const GENERATORS = [
  "random",
  "mutated",
  "attribute-soup",
  "stun-header-random-body",
  "ufrag-mutated",
  "shared-record-soup",
] as const;
const genCounts = new Map<string, number>(GENERATORS.map((g) => [g, 0]));

function mutate(src: Uint8Array): Uint8Array {
  let b = Uint8Array.from(src);
  const edits = 1 + below(4);
  for (let e = 0; e < edits; e++) {
    switch (below(9)) {
      case 0: // flip a bit
        if (b.length) b[below(b.length)]! ^= 1 << below(8);
        break;
      case 1: // set a byte to an interesting value
        if (b.length) b[below(b.length)] = [0, 1, 0x3a, 0x7f, 0x80, 0xff, 0x20, 0x40][below(8)]!;
        break;
      case 2: // truncate
        b = b.subarray(0, below(b.length + 1));
        break;
      case 3: // append random bytes
        b = Uint8Array.of(...b, ...randomBytes(1 + below(16)));
        break;
      case 4: // STUN header length field
        if (b.length >= 4) {
          const v = chance(0.5) ? b.length - 20 + (below(9) - 4) * 4 : below(0x10000);
          b[2] = (v >> 8) & 255;
          b[3] = v & 255;
        }
        break;
      case 5: // an attribute length field (STUN attributes start at 4-byte boundaries from 20)
        if (b.length >= 24) {
          const at = 20 + 4 * below((b.length - 20) >> 2);
          if (at + 4 <= b.length) {
            const v = [0, 1, 3, 4, 20, 24, 0xffff, below(0x10000)][below(8)]!;
            b[at + 2] = v >> 8;
            b[at + 3] = v & 255;
          }
        }
        break;
      case 6: // an attribute type field
        if (b.length >= 24) {
          const at = 20 + 4 * below((b.length - 20) >> 2);
          if (at + 2 <= b.length) {
            const t = [0x0006, 0x0008, 0x8028, 0x0025, 0x0024, 0x8029, 0x802a, below(0x10000)][below(8)]!;
            b[at] = t >> 8;
            b[at + 1] = t & 255;
          }
        }
        break;
      case 7: // splice a window of another corpus entry in
        {
          const other = corpus[below(corpus.length)]!;
          const from = below(other.length);
          const n = below(other.length - from + 1);
          const at = below(b.length + 1);
          b = Uint8Array.of(...b.subarray(0, at), ...other.subarray(from, from + n), ...b.subarray(at));
        }
        break;
      default: {
        // delete a range
        const at = below(b.length + 1);
        const n = below(9);
        b = Uint8Array.of(...b.subarray(0, at), ...b.subarray(at + n));
      }
    }
  }
  return b;
}

/** A well-framed STUN message with random attributes and, half the time, a correct FINGERPRINT. */
function attributeSoup(): Uint8Array {
  const attrs = [];
  const n = below(7);
  for (let i = 0; i < n; i++) {
    const type = [0x0006, 0x0008, 0x8028, 0x0025, 0x0024, 0x802a, below(0x10000)][below(7)]!;
    const len = type === 0x0008 && chance(0.7) ? 20 : type === 0x8028 && chance(0.7) ? 4 : below(48);
    const value =
      type === 0x0006 && chance(0.5)
        ? new TextEncoder().encode(
            chance(0.5) ? `${[...minted][below(minted.size)]}:${randomUfrag(4)}` : randomUfrag(1 + below(30)),
          )
        : randomBytes(len);
    attrs.push({ type, value });
  }
  const m = encodeStunMessage({
    type: below(0x4000),
    transactionId: randomBytes(12),
    attributes: attrs,
    fingerprint: chance(0.5),
  });
  return chance(0.5) ? scramblePadding(m) : m;
}

/** Fills attribute padding with non-zero bytes (':' among them) and re-seals FINGERPRINT if last. */
function scramblePadding(b: Uint8Array): Uint8Array {
  for (let i = 20; i + 4 <= b.length; ) {
    const len = (b[i + 2]! << 8) | b[i + 3]!;
    const end = i + 4 + ((len + 3) & ~3);
    if (end > b.length) break;
    for (let j = i + 4 + len; j < end; j++) b[j] = [0x3a, 0x20, 0xff, rand32() & 255][below(4)]!;
    i = end;
  }
  const fo = b.length - 8;
  if (fo >= 20 && b[fo] === 0x80 && b[fo + 1] === 0x28) {
    const crc = (crc32(b, 0, fo) ^ 0x5354554e) >>> 0;
    b[fo + 4] = crc >>> 24;
    b[fo + 5] = (crc >>> 16) & 255;
    b[fo + 6] = (crc >>> 8) & 255;
    b[fo + 7] = crc & 255;
  }
  return b;
}

function stunHeaderRandomBody(): Uint8Array {
  const n = 4 * below(30);
  const b = randomBytes(20 + n);
  b[0] = b[0]! & 0x3f;
  b[2] = n >> 8;
  b[3] = n & 255;
  b.set([0x21, 0x12, 0xa4, 0x42], 4);
  return b;
}

/**
 * A client's Binding request whose server ufrag has 1-3 characters replaced by other ice-chars (so
 * it still decodes, and the MAC has to catch it), with FINGERPRINT recomputed so the relay's reader
 * accepts the message and reaches hint verification.
 */
function ufragMutated(): Uint8Array {
  const b = Uint8Array.from(corpus[below(64)]!); // the minted Binding requests; USERNAME value at 24
  const n = 1 + below(3);
  for (let i = 0; i < n; i++) b[24 + below(HINT_CHARS)] = ufragChars.charCodeAt(below(64));
  const fo = b.length - 8;
  const crc = (crc32(b, 0, fo) ^ 0x5354554e) >>> 0;
  b[fo + 4] = crc >>> 24;
  b[fo + 5] = (crc >>> 16) & 255;
  b[fo + 6] = (crc >>> 8) & 255;
  b[fo + 7] = crc & 255;
  return b;
}

function nextDatagram(): Uint8Array {
  const r = below(100);
  if (r < 20) {
    genCounts.set("random", genCounts.get("random")! + 1);
    const b = randomBytes(below(600));
    if (b.length && chance(0.5)) b[0] = below(4); // make the STUN first-byte path likely
    return b;
  }
  if (r < 60) {
    genCounts.set("mutated", genCounts.get("mutated")! + 1);
    return mutate(corpus[below(corpus.length)]!);
  }
  if (r < 65) {
    genCounts.set("shared-record-soup", genCounts.get("shared-record-soup")! + 1);
    return shared.soup(below, randomBytes);
  }
  if (r < 75) {
    genCounts.set("ufrag-mutated", genCounts.get("ufrag-mutated")! + 1);
    return ufragMutated();
  }
  if (r < 90) {
    genCounts.set("attribute-soup", genCounts.get("attribute-soup")! + 1);
    return attributeSoup();
  }
  genCounts.set("stun-header-random-body", genCounts.get("stun-header-random-body")! + 1);
  return stunHeaderRandomBody();
}

// ---- checks ----------------------------------------------------------------------------------
const STUN_STATUSES = new Set([
  "ok",
  "not-stun",
  "truncated",
  "bad-length",
  "bad-attribute",
  "attribute-after-fingerprint",
  "bad-fingerprint",
  "bad-username",
]);
const HINT_STATUSES = new Set(["ok", "malformed", "unsupported-version", "unknown-key", "bad-mac"]);
const FRAME_STATUSES = new Set([
  "ok",
  "truncated",
  "bad-magic",
  "unsupported-version",
  "bad-type",
  "bad-address",
]);

const counts = {
  classify: new Map<string, number>(),
  stun: new Map<string, number>(),
  hintUsername: new Map<string, number>(),
  hintWindow: new Map<string, number>(),
  frame: new Map<string, number>(),
  framePayloadStun: new Map<string, number>(),
};
const bump = (m: Map<string, number>, k: string): void => {
  m.set(k, (m.get(k) ?? 0) + 1);
};

interface Finding {
  index: number;
  what: string;
  inputHex: string;
  len: number;
}
const findings: Finding[] = [];
let currentIndex = 0;
let currentInput: Uint8Array = new Uint8Array(0);
let currentLen = 0;
function find(what: string): void {
  if (findings.length < 50) {
    findings.push({
      index: currentIndex,
      what,
      inputHex: Buffer.from(currentInput).toString("hex"),
      len: currentLen,
    });
  }
}
const check = (cond: boolean, what: string): void => {
  if (!cond) find(what);
};

const view = newStunView();
const view2 = newStunView();
const verifier = new HintVerifier(mac);
const hint = newHintFields();
const frame = newFrameHeader();
const reencoded = new Uint8Array(FRAME_HEADER_BYTES);

function u16(b: Uint8Array, i: number): number {
  return (b[i]! << 8) | b[i + 1]!;
}

function sameView(a: StunView, b: StunView): boolean {
  return (
    a.messageClass === b.messageClass &&
    a.method === b.method &&
    a.usernameOffset === b.usernameOffset &&
    a.usernameLength === b.usernameLength &&
    a.colonOffset === b.colonOffset &&
    a.messageIntegrityOffset === b.messageIntegrityOffset &&
    a.fingerprintOffset === b.fingerprintOffset &&
    a.hasFingerprint === b.hasFingerprint &&
    a.useCandidate === b.useCandidate
  );
}

/** STUN reader invariants; returns the status. `tag` names the path in findings. */
function checkStun(buf: Uint8Array, len: number, tag: string, counter: Map<string, number>): string {
  const status = readStun(buf, len, view);
  bump(counter, status);
  check(STUN_STATUSES.has(status), `${tag}: unknown status ${status}`);
  const end = Math.max(0, Math.min(len, buf.length));
  // depends only on buf[0..len)
  const exact = buf.slice(0, end);
  check(readStun(exact, end, view2) === status, `${tag}: result depends on bytes past len`);
  if (status !== "ok") return status;
  check(sameView(view, view2), `${tag}: view depends on bytes past len`);
  check(isStun(buf, end), `${tag}: read ok but isStun false`);
  check(readStun(buf, len, view2) === "ok" && sameView(view, view2), `${tag}: second read differs`);
  if (view.usernameOffset >= 0) {
    check(
      view.usernameOffset >= 24 && view.usernameOffset + view.usernameLength <= end,
      `${tag}: USERNAME out of bounds`,
    );
    check(
      u16(buf, view.usernameOffset - 4) === StunAttr.username,
      `${tag}: USERNAME offset not at a USERNAME`,
    );
    check(view.usernameLength >= 1 && view.usernameLength <= 513, `${tag}: USERNAME length`);
    if (view.colonOffset >= 0) {
      check(
        view.colonOffset >= view.usernameOffset &&
          view.colonOffset < view.usernameOffset + view.usernameLength &&
          buf[view.colonOffset] === 0x3a,
        `${tag}: colon offset`,
      );
      const ufragLen = view.colonOffset - view.usernameOffset;
      const hs = verifier.verify(buf, view.usernameOffset, ufragLen, hint);
      bump(counts.hintUsername, hs);
      check(HINT_STATUSES.has(hs), `hint: unknown status ${hs}`);
      if (hs === "ok") {
        const text = Buffer.from(buf.subarray(view.usernameOffset, view.colonOffset)).toString("latin1");
        check(minted.has(text), "hint: a ufrag that was never minted verified ok (forgery)");
      }
    }
  } else check(view.colonOffset === -1, `${tag}: colon without USERNAME`);
  if (view.messageIntegrityOffset >= 0) {
    check(
      view.messageIntegrityOffset >= 20 && view.messageIntegrityOffset + 24 <= end,
      `${tag}: MI out of bounds`,
    );
    check(u16(buf, view.messageIntegrityOffset) === StunAttr.messageIntegrity, `${tag}: MI offset not at MI`);
    check(view.usernameOffset < view.messageIntegrityOffset, `${tag}: USERNAME taken from after MI`);
  }
  check(view.hasFingerprint === view.fingerprintOffset >= 0, `${tag}: hasFingerprint disagrees with offset`);
  if (view.hasFingerprint) {
    const fo = view.fingerprintOffset;
    check(fo + 8 === end && u16(buf, fo) === StunAttr.fingerprint, `${tag}: FINGERPRINT not last`);
    const crc = (crc32(buf, 0, fo) ^ 0x5354554e) >>> 0;
    const stored = ((buf[fo + 4]! << 24) | (buf[fo + 5]! << 16) | (buf[fo + 6]! << 8) | buf[fo + 7]!) >>> 0;
    check(crc === stored, `${tag}: FINGERPRINT accepted with a wrong CRC`);
  }
  return status;
}

function checkOne(buf: Uint8Array, len: number): void {
  const kind = classifyDatagram(buf, len);
  const name = DATAGRAM_KIND_NAMES[kind];
  check(name !== undefined, `classify: kind ${kind} out of range`);
  bump(counts.classify, name ?? String(kind));
  check(
    classifyDatagram(buf.slice(0, Math.max(0, Math.min(len, buf.length))), len) === kind,
    "classify: depends on bytes past len",
  );

  // (The reader accepts any first byte 0x00-0x3f, STUN's whole type space; RFC 7983 narrows the
  // demultiplexer to 0-3, so the relay classifies first. No invariant links the two.)
  checkStun(buf, len, "stun", counts.stun);

  // the hint verifier on an arbitrary window (mostly malformed, but also decodable base64)
  if (buf.length >= HINT_CHARS) {
    const off = below(buf.length - HINT_CHARS + 1);
    const hs = verifier.verify(buf, off, HINT_CHARS, hint);
    bump(counts.hintWindow, hs);
    check(HINT_STATUSES.has(hs), `hint window: unknown status ${hs}`);
    if (hs === "ok")
      check(
        minted.has(Buffer.from(buf.subarray(off, off + HINT_CHARS)).toString("latin1")),
        "hint window: forgery",
      );
  }

  const fs = decodeFrameHeader(buf, len, frame);
  bump(counts.frame, fs);
  check(FRAME_STATUSES.has(fs), `frame: unknown status ${fs}`);
  if (fs === "ok") {
    encodeFrameHeader(reencoded, 0, frame);
    let same = true;
    for (let i = 0; i < FRAME_HEADER_BYTES; i++) if (reencoded[i] !== buf[i]) same = false;
    check(same, "frame: decoded ok but re-encodes differently");
    check(frame.type >= FrameType.data && frame.type <= FrameType.pathValidated, "frame: type out of range");
    checkStun(
      buf.subarray(FRAME_HEADER_BYTES, len),
      len - FRAME_HEADER_BYTES,
      "frame payload",
      counts.framePayloadStun,
    );
  }

  conference.check(buf, len, check);
  shared.check(buf, len, check);
}

// ---- run -------------------------------------------------------------------------------------
const started = performance.now();
const deadline = started + SECONDS * 1000;
let done = 0;
for (; done < COUNT; done++) {
  if ((done & 4095) === 0 && performance.now() > deadline) break;
  currentIndex = done;
  const dgram = nextDatagram();
  // a third of the time the datagram sits in a larger buffer with garbage after len
  let buf: Uint8Array = dgram;
  if (chance(0.33)) {
    buf = new Uint8Array(dgram.length + 1 + below(32));
    buf.set(dgram);
    buf.set(randomBytes(buf.length - dgram.length), dgram.length);
  }
  // and sometimes len lies (beyond the buffer, or negative)
  const len = chance(0.02) ? dgram.length + below(64) - 8 : dgram.length;
  currentInput = buf;
  currentLen = len;
  try {
    checkOne(buf, len);
  } catch (e) {
    find(`threw: ${(e as Error).stack ?? String(e)}`);
  }
}
const seconds = (performance.now() - started) / 1000;

// ---- report ----------------------------------------------------------------------------------
const table = (title: string, m: Map<string, number>): void => {
  const total = [...m.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${title} (${total.toLocaleString("en-US")})`);
  for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1])) {
    console.log(
      `  ${k.padEnd(30)} ${v.toLocaleString("en-US").padStart(12)}  ${((100 * v) / total).toFixed(2).padStart(6)}%`,
    );
  }
};
console.log(
  `fuzz: ${done.toLocaleString("en-US")} datagrams in ${seconds.toFixed(1)} s (${Math.round(done / seconds).toLocaleString("en-US")}/s), seed ${SEED}`,
);
table("generators", genCounts);
table("classifyDatagram", counts.classify);
table("readStun", counts.stun);
table("HintVerifier on USERNAME server ufrag", counts.hintUsername);
table("HintVerifier on a random 24-byte window", counts.hintWindow);
table("decodeFrameHeader", counts.frame);
table("readStun on frame payloads", counts.framePayloadStun);
table("decodeConferenceFrame", conference.counts);
table("SharedMessageReader (how each walk ended)", shared.counts);
table("SharedMessageReader ok records", shared.records);
const summary = {
  msg: "fuzz-summary",
  seed: SEED,
  datagrams: done,
  seconds: Number(seconds.toFixed(2)),
  findings: findings.length,
  stunOk: counts.stun.get("ok") ?? 0,
  hintOk: (counts.hintUsername.get("ok") ?? 0) + (counts.hintWindow.get("ok") ?? 0),
};
if (findings.length > 0) {
  console.log(
    `\nFINDINGS (${findings.length}${findings.length === 50 ? ", first 50" : ""}); replay with --seed ${SEED}:`,
  );
  for (const f of findings) console.log(`  #${f.index} len=${f.len} ${f.what}\n    ${f.inputHex}`);
} else {
  console.log("\nno findings");
}
console.log(JSON.stringify(summary));
if (done < 1_000_000 && COUNT >= 1_000_000)
  console.log(`note: stopped at the ${SECONDS} s bound before 1,000,000`);
process.exit(findings.length > 0 ? 1 : 0);
