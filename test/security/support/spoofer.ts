// The attacker, as its own process: sends one captured datagram from each of `count` source
// addresses 127.X.Y.1 (each in its own /24; the whole 127/8 is local on Linux, so the POP really
// sees these sources), spread over `spreadMs`. Like a spoofer, it never answers anything; it only
// counts what comes back to each source for `holdMs`. Prints one JSON line.
//   node spoofer.ts <vipPort> <payloadHex> <count> <spreadMs> <holdMs> [firstIndex]
import { createSocket } from "node:dgram";

const [vipPort, hex, countArg, spreadArg, holdArg, firstArg] = process.argv.slice(2);
const payload = Buffer.from(hex!, "hex");
const count = Number(countArg);
const spreadMs = Number(spreadArg);
const holdMs = Number(holdArg);
const first = Number(firstArg ?? 0);

/** Source i: 127.(1 + i/256).(i%256).1, so 30,000 sources lie in 30,000 /24s. */
function sourceOf(i: number): string {
  return `127.${1 + (i >> 8)}.${i & 255}.1`;
}

let launched = 0;
let done = 0;
let sentBytes = 0;
let receivedBytes = 0;
let receivedDatagrams = 0;
let answeredSources = 0;
let maxRatio = 0;
let errors = 0;

function launch(i: number): void {
  const s = createSocket("udp4");
  let rx = 0;
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    s.close();
    receivedBytes += rx;
    if (rx > 0) answeredSources++;
    maxRatio = Math.max(maxRatio, rx / payload.length);
    if (++done === count) report();
  };
  s.on("message", (m) => {
    rx += m.length;
    receivedDatagrams++;
  });
  s.on("error", () => {
    errors++;
    finish();
  });
  s.bind(0, sourceOf(first + i), () => {
    s.send(payload, Number(vipPort), "127.0.0.1", (err) => {
      if (err) errors++;
      else sentBytes += payload.length;
    });
    setTimeout(finish, holdMs);
  });
}

function report(): void {
  process.stdout.write(
    `${JSON.stringify({ sources: count, sentBytes, receivedBytes, receivedDatagrams, answeredSources, maxRatio, errors })}\n`,
  );
  process.exit(0);
}

const ticks = Math.max(1, Math.floor(spreadMs / 10));
const perTick = Math.ceil(count / ticks);
const timer = setInterval(() => {
  for (let k = 0; k < perTick && launched < count; k++) launch(launched++);
  if (launched >= count) clearInterval(timer);
}, 10);
