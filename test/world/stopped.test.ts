// Waiting for a killed program to be gone: a live member of its process group keeps the wait going
// (and a bounded wait fails naming it); once the group is gone the wait returns. Real processes.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { liveInGroup, StillRunningError, waitGone } from "../../scripts/world/stopped.ts";

describe("waitGone", () => {
  it("fails, naming the process, while a member of the group lives; returns once it is gone", async () => {
    // A group whose leader exits at once and leaves a grandchild behind, as the wrapper did.
    const leader = spawn("sh", ["-c", "sleep 30 & exit 0"], { detached: true, stdio: "ignore" });
    const pgid = leader.pid!;
    await new Promise((r) => leader.once("exit", r));
    const [orphan] = liveInGroup(pgid);
    expect(orphan).toBeDefined();
    const err = await waitGone("sleeper", pgid, null, [], 300).catch((e: Error) => e);
    expect(err).toBeInstanceOf(StillRunningError);
    expect((err as Error).message).toContain(String(orphan));
    process.kill(-pgid, "SIGKILL");
    await waitGone("sleeper", pgid, null, [], 5_000);
    expect(liveInGroup(pgid)).toEqual([]);
  });
});
