// Worker entry point (wrangler.toml `main`).
import { createApp } from "./app.ts";

const app = createApp();

export default {
  fetch: app.fetch,
};
