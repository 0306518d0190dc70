// The run as a picture for a design review: per site, median RTT, jitter and loss through the
// Global Relay and on the direct public path, as an SVG rendered to PNG by headless Chromium.
import { launchChromium } from "../lib/chromium.ts";
import type { WorldReport } from "./core/report.ts";

const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

export function plotSvg(r: WorldReport): string {
  const W = 1000;
  const panelH = 230;
  const left = 120;
  const panels: { title: string; key: "rttMs" | "jitterMs" | "lossPct" | "connectMs"; unit: string }[] = [
    { title: "median RTT (echoed audio)", key: "rttMs", unit: "ms" },
    { title: "jitter (RFC 3550 estimate on the round trip)", key: "jitterMs", unit: "ms" },
    { title: "loss", key: "lossPct", unit: "%" },
    { title: "answer → ICE+DTLS connected", key: "connectMs", unit: "ms" },
  ];
  const parts: string[] = [];
  panels.forEach((p, pi) => {
    const y0 = 85 + pi * panelH;
    const vals = r.sites.flatMap((s) => [
      s.relay[p.key],
      s.direct[p.key],
      p.key === "rttMs" ? s.relay.expectedRttMs : 0,
    ]);
    const max = Math.max(1, ...vals.filter(Number.isFinite)) * 1.15;
    const bw = (W - left - 40) / r.sites.length;
    parts.push(`<text x="20" y="${y0 - 12}" class="t">${esc(p.title)} (${p.unit})</text>`);
    parts.push(`<line x1="${left}" y1="${y0 + 170}" x2="${W - 20}" y2="${y0 + 170}" class="ax"/>`);
    r.sites.forEach((s, i) => {
      const x = left + i * bw + bw * 0.15;
      const barW = bw * 0.3;
      for (const [k, path] of [
        [0, s.relay],
        [1, s.direct],
      ] as const) {
        const v = path[p.key];
        const h = Number.isFinite(v) ? (v / max) * 160 : 0;
        const bx = x + k * (barW + 6);
        parts.push(
          `<rect x="${bx}" y="${y0 + 170 - h}" width="${barW}" height="${h}" class="${k ? "d" : "r"}"/>`,
        );
        parts.push(
          `<text x="${bx + barW / 2}" y="${y0 + 165 - h}" class="v">${Number.isFinite(v) ? v.toFixed(v >= 100 ? 0 : 1) : "-"}</text>`,
        );
        if (p.key === "rttMs") {
          const e = path.expectedRttMs;
          const ey = y0 + 170 - (e / max) * 160;
          parts.push(`<line x1="${bx - 3}" y1="${ey}" x2="${bx + barW + 3}" y2="${ey}" class="e"/>`);
        }
      }
      parts.push(`<text x="${x + barW + 3}" y="${y0 + 188}" class="s">${esc(s.name)}</text>`);
      parts.push(
        `<text x="${x + barW + 3}" y="${y0 + 203}" class="p">${esc(`${s.pop} → ${s.cluster}`)}</text>`,
      );
    });
  });
  const H = 85 + panels.length * panelH + 60;
  const a = r.assumptions;
  const note = `links: last mile ${a.metroRttMs} ms RTT; public one-way jitter ${a.public.jitterMs} ms + ${a.public.jitterPerMs} x delay, loss ${a.public.lossPct}% + ${a.public.lossPerMs}%/ms (bursts of ${a.public.burst}); backbone RTT x${a.backbone.rttFactor}, jitter ${a.backbone.jitterMs} ms, loss ${a.backbone.lossPct}%`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">
<style>.t{font:600 15px sans-serif}.s{font:600 13px sans-serif;text-anchor:middle}.p{font:11px sans-serif;fill:#555;text-anchor:middle}
.v{font:11px sans-serif;text-anchor:middle}.r{fill:#2b6cb0}.d{fill:#c05621}.ax{stroke:#999}.e{stroke:#000;stroke-width:2;stroke-dasharray:4 2}
.l{font:12px sans-serif}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="20" y="26" style="font:700 18px sans-serif">Global Relay on an emulated planet: relay vs direct public path, per client site</text>
<rect x="620" y="40" width="12" height="12" class="r"/><text x="638" y="51" class="l">through the Global Relay</text>
<rect x="800" y="40" width="12" height="12" class="d"/><text x="818" y="51" class="l">direct to the cluster</text>
${parts.join("\n")}
<text x="20" y="${H - 48}" class="l">dashed line: RTT the emulated links add up to.</text>
<text x="20" y="${H - 30}" class="l">${esc(note)}</text>
<text x="20" y="${H - 12}" class="l">popRttMatch ${r.popRttMatch}; ${esc(r.failover.map((f) => `failover ${f.redis ? "with" : "without"} Redis: gap ${Math.round(f.gapMs)} ms, ${f.survived ? "survived" : "lost"}`).join("; "))}</text>
</svg>`;
}

export async function renderPlot(r: WorldReport, pngFile: string): Promise<void> {
  const svg = plotSvg(r);
  const b = await launchChromium();
  try {
    const page = await b.browser.newPage({ viewport: { width: 1000, height: 1100 } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.locator("svg").screenshot({ path: pngFile });
  } finally {
    await b.close();
  }
}
