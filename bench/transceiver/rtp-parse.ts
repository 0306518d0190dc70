// `node bench/transceiver/rtp-parse.ts`: ns per RTP header, werift's RtpHeader.deSerialize against
// the transceiver's parser (srtp/rtp-header.ts), in the same run, on an audio header as Chromium
// sends it where extensions are negotiated (the transceiver's answer negotiates none)
// (RFC 8285 one-byte extensions: audio level, abs-send-time, transport-cc, mid) and on a plain
// one (a werift client's). Three rounds of 10^6 headers each; prints the ratios.
import { RtpHeader } from "werift";
import { parseRtpHeader } from "../../regional/transceiver/srtp/rtp-header.ts";

const werift = RtpHeader.deSerialize.bind(RtpHeader);
const fixed = Buffer.from("906f1234000003c0deadbeef", "hex");
const elements = Buffer.from("10ff22aabbcc310102606100", "hex"); // IDs 1, 2, 3, 6; three words
const chromium = Buffer.concat([fixed, Buffer.from([0xbe, 0xde, 0, 3]), elements, Buffer.alloc(80, 7)]);
const plain = Buffer.concat([Buffer.from([0x80]), fixed.subarray(1), Buffer.alloc(80, 7)]);

function nsPer(f: () => unknown): number {
  for (let i = 0; i < 200_000; i++) f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < 1_000_000; i++) f();
  return Number(process.hrtime.bigint() - t) / 1_000_000;
}

for (const [name, pkt] of [
  ["chromium audio (4 extensions)", chromium],
  ["plain (no extension)", plain],
] as const) {
  const ours = parseRtpHeader(pkt, pkt.length);
  if (JSON.stringify(ours) !== JSON.stringify(werift(pkt))) throw new Error(`${name}: the parsers disagree`);
  for (let r = 1; r <= 3; r++) {
    const w = nsPer(() => werift(pkt));
    const o = nsPer(() => parseRtpHeader(pkt, pkt.length));
    console.log(
      `${name}, round ${r}: werift ${w.toFixed(0)} ns, ours ${o.toFixed(0)} ns: x${(w / o).toFixed(1)}`,
    );
  }
}
