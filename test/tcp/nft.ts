// "A network that drops UDP": an nftables table inside a test's network namespace that drops
// every UDP datagram to the host end (the VIP and everything else), so only TCP gets through.
// The rule lives in the namespace only; deleting the table (or the namespace) lifts it.
import { execFileSync } from "node:child_process";
import { which } from "../../scripts/lib/system-deps.ts";

const TABLE = "gr_block_udp";

export interface UdpBlock {
  /** Datagrams the rule dropped so far (proof the browser tried UDP and it was blocked). */
  dropped(): number;
  lift(): void;
}

function nft(netns: string, args: string[], input?: string): string {
  return execFileSync("ip", ["netns", "exec", netns, "nft", ...args], {
    input,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
  });
}

export function blockUdp(netns: string, hostIp: string): UdpBlock {
  if (!which("nft"))
    throw new Error("nft is not installed: run `npm run setup:system` (Debian package nftables)");
  nft(
    netns,
    ["-f", "-"],
    `table inet ${TABLE} {
  chain out {
    type filter hook output priority 0; policy accept;
    ip daddr ${hostIp} meta l4proto udp counter drop
  }
}
`,
  );
  let lifted = false;
  return {
    dropped() {
      const text = nft(netns, ["list", "table", "inet", TABLE]);
      const m = /counter packets (\d+)/.exec(text);
      return m ? Number(m[1]) : 0;
    },
    lift() {
      if (lifted) return;
      lifted = true;
      nft(netns, ["delete", "table", "inet", TABLE]);
    },
  };
}
