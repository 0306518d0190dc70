// Preloaded (`node --import`) into every process the local system starts. The supervisor hands
// each child the read end of a pipe as fd 3 and never writes to it: EOF there means the supervisor
// is gone, however it died (SIGKILL included), so the child stops its own process group (itself
// and whatever it spawned, e.g. wrangler's workerd): SIGINT first, SIGKILL after a grace period.
import { Socket } from "node:net";
import { isMainThread } from "node:worker_threads";

const fd = Number(process.env.GR_PARENT_FD);
// Grandchildren (forks inheriting the preload) must not watch a descriptor that is not theirs.
delete process.env.GR_PARENT_FD;
const GRACE_MS = 1_200;

if (isMainThread && Number.isInteger(fd) && fd > 2) {
  const pipe = new Socket({ fd, readable: true, writable: false });
  const orphaned = (): void => {
    const group = -process.pid;
    try {
      process.kill(group, "SIGINT");
    } catch {
      process.kill(process.pid, "SIGINT");
    }
    setTimeout(() => {
      try {
        process.kill(group, "SIGKILL");
      } finally {
        process.exit(1);
      }
    }, GRACE_MS).unref();
  };
  pipe.on("data", () => {});
  pipe.once("end", orphaned);
  pipe.once("error", orphaned);
  pipe.unref();
}
