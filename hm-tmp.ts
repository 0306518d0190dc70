import { createHmac, randomBytes } from "node:crypto";
import { HmacSha1 as New } from "./regional/transceiver/srtp/hmac-sha1.ts";
import { HmacSha1 as Old } from "/tmp/hmac-old.ts";
import { HmacSha1 as Unr } from "/tmp/hmac-unrolled.ts";
import { HmacSha1 as C5 } from "/tmp/hmac-c5.ts";
const key = randomBytes(20);
const msg = randomBytes(132);
const out = new Uint8Array(10);
for (const [name, C] of [["old", Old], ["new", New], ["unr", Unr], ["c5", C5], ["old", Old], ["new", New], ["unr", Unr], ["c5", C5]] as const) {
  const h = new C(key);
  const n = 300_000;
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) { msg[0] = i & 255; h.update(msg, 0, 132); h.updateUint32(i); h.finishInto(out, 0, 10); }
  const c = process.cpuUsage(t0);
  console.log(name, ((c.user + c.system) / n * 1000).toFixed(0), "ns/tag");
}
const h = new New(key); const m = randomBytes(137);
h.update(m, 0, 137); const o = new Uint8Array(20); h.finishInto(o, 0, 20);
console.log(Buffer.from(o).equals(createHmac("sha1", key).update(m).digest()));
const u = new Unr(key); u.update(m, 0, 137); const o2 = new Uint8Array(20); u.finishInto(o2, 0, 20); console.log(Buffer.from(o2).equals(createHmac("sha1", key).update(m).digest()));
const u5 = new C5(key); u5.update(m, 0, 137); const o5 = new Uint8Array(20); u5.finishInto(o5, 0, 20); console.log(Buffer.from(o5).equals(createHmac("sha1", key).update(m).digest()));
