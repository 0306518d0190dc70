// The one headless Chromium launcher lives with the scripts (the world runner uses it too);
// tests import it from here.
export { type BrowserHandle, launchChromium } from "../../scripts/lib/chromium.ts";
