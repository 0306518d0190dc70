// Writes docs/grafana/global-relay.json from regional/dashboard/panels.ts (the page's panel
// catalogue), so Grafana and the built-in dashboard run the same queries.
// Usage: npx node scripts/dashboard-grafana.ts [--check]
import { readFileSync, writeFileSync } from "node:fs";
import { grafanaDashboardText } from "../regional/dashboard/grafana.ts";

const file = new URL("../docs/grafana/global-relay.json", import.meta.url);
const text = grafanaDashboardText();
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(file, "utf8");
  } catch {}
  if (current !== text) {
    console.error("docs/grafana/global-relay.json is stale: run npx node scripts/dashboard-grafana.ts");
    process.exit(1);
  }
  console.log("docs/grafana/global-relay.json is up to date");
} else {
  writeFileSync(file, text);
  console.log(`wrote docs/grafana/global-relay.json (${text.length} bytes)`);
}
