// The demo hooks: GET / serves edge/demo/page.ts (DEMO_HTML, owned by the demo page's author);
// GET /demo/offer.sdp a fresh example offer for curl (edge/demo/offer.ts). Nothing else in the
// edge depends on them.
import type { Hono } from "hono";
import { exampleOffer } from "../demo/offer.ts";
import { DEMO_HTML } from "../demo/page.ts";
import type { AppEnv } from "../env.ts";
import { admitIp } from "../http.ts";

export function registerDemo(app: Hono<AppEnv>): void {
  app.get("/", (c) => {
    c.set("route", "demo");
    c.header("cache-control", "no-cache");
    return c.html(DEMO_HTML);
  });
  app.get("/demo/offer.sdp", async (c) => {
    c.set("route", "demo");
    await admitIp(c);
    c.header("cache-control", "no-store");
    c.header("content-type", "application/sdp");
    return c.body(exampleOffer(crypto.getRandomValues(new Uint8Array(40))));
  });
}
