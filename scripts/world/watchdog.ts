// Cleanup watchdog: started detached by the world runner, it outlives a SIGKILLed runner and then
// removes that run's namespaces (and every process inside them). `node watchdog.ts <pid> <tag>`.
import { removeRun } from "./netns.ts";

const pid = Number(process.argv[2]);
const tag = process.argv[3] ?? "";
if (!Number.isInteger(pid) || !/^grw\d+x$/.test(tag)) process.exit(2);
process.on("SIGTERM", () => process.exit(0));
const timer = setInterval(() => {
  try {
    process.kill(pid, 0);
  } catch {
    clearInterval(timer);
    removeRun(tag);
    process.exit(0);
  }
}, 250);
