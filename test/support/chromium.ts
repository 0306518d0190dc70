// Chromium for tests: the launcher lives with the programs that use it too (scripts/world), so
// scripts/ need not import test/.
export { type BrowserHandle, launchChromium } from "../../scripts/lib/chromium.ts";
