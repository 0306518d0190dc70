// The demo page hook: GET / serves edge/demo/page.ts (DEMO_HTML, owned by the demo page's author).
// Nothing else in the edge depends on it.
import type { Hono } from "hono";
import { DEMO_HTML } from "../demo/page.ts";
import type { AppEnv } from "../env.ts";

export function registerDemo(app: Hono<AppEnv>): void {
  app.get("/", (c) => {
    c.set("route", "demo");
    c.header("cache-control", "no-cache");
    return c.html(DEMO_HTML);
  });
}
