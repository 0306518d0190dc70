// One active probe: GET {signallingUrl}/healthz, signed like every cluster request.
// 200 {status:"ok"|"draining", load, capacity} is health; anything else is "down" with a reason.
import type { SigningKeys } from "../../shared/signing/request.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import { clusterFetch, readJson } from "../cluster/client.ts";
import type { ProbeRecord } from "./book.ts";

export async function probeCluster(
  cluster: ClusterSpec,
  key: SigningKeys,
  timeoutMs: number,
  now: () => number,
): Promise<ProbeRecord> {
  const sentAt = now();
  const down = (status: string): ProbeRecord => ({ ok: false, status, load: 0, capacity: 0, atMs: sentAt });
  let res: Response;
  try {
    res = await clusterFetch(cluster, key, {
      method: "GET",
      path: "/healthz",
      nowMs: sentAt,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const name = (e as { name?: string }).name;
    return down(name === "TimeoutError" || name === "AbortError" ? "timeout" : "unreachable");
  }
  const body = (await readJson(res, 16 * 1024).catch(() => null)) as Record<string, unknown> | null;
  const status = body?.status;
  if (
    (res.status === 200 && status === "ok") ||
    ((res.status === 200 || res.status === 503) && status === "draining")
  ) {
    const load = typeof body?.load === "number" && body.load >= 0 ? body.load : 0;
    const capacity = typeof body?.capacity === "number" && body.capacity > 0 ? body.capacity : 0;
    return { ok: true, status, load, capacity, atMs: sentAt };
  }
  return down(res.ok ? "bad_body" : `http_${res.status}`);
}
