// The join tests' common ground (participants.test.ts, participant-leg.test.ts): four signed fake
// clusters with fake conferences on loopback, started once per file, edges made per test and
// disposed after it, and the request log of each cluster. Call conferenceSuite() at the top of
// a test file: it registers the vitest hooks.
import { afterAll, afterEach, beforeAll } from "vitest";
import { FakeCluster, type RecordedRequest } from "./fake-cluster.ts";
import { FakeConference } from "./fake-conference.ts";
import { CLUSTERS, topologyFor } from "./fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "./harness.ts";

export function conferenceSuite() {
  const secrets = makeSecrets();
  const clusters = new Map<string, FakeCluster>();
  const conferences = new Map<string, FakeConference>();
  let edges: Edge[] = [];

  beforeAll(async () => {
    const hubs = new Map<number, FakeConference>();
    for (const c of CLUSTERS) {
      const f = new FakeCluster(c.name, c.id, secrets.clusterSecret, secrets.callIdRing);
      await f.start();
      clusters.set(c.name, f);
      conferences.set(c.name, new FakeConference(f, secrets.callIdRing, hubs));
    }
  });
  afterEach(async () => {
    await Promise.all(edges.map((e) => e.dispose()));
    edges = [];
    for (const c of conferences.values()) c.reset();
  });
  afterAll(async () => {
    for (const f of clusters.values()) await f.stop();
  });

  const bearer = (token = secrets.apiKey) => ({ authorization: `Bearer ${token}` });
  const codeOf = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

  async function edge(): Promise<Edge> {
    const urls = Object.fromEntries([...clusters].map(([n, f]) => [n, f.url]));
    const e = await startEdge({
      topology: topologyFor(urls),
      bindings: { ...secrets.bindings, CLUSTER_TIMEOUT_MS: "1000" },
    });
    edges.push(e);
    return e;
  }

  /** Requests each cluster received since `mark` (an index per cluster). */
  const marks = () => new Map([...clusters].map(([n, f]) => [n, f.requests.length]));
  const since = (m: Map<string, number>): Map<string, RecordedRequest[]> =>
    new Map(
      [...clusters].map(([n, f]) => [n, f.requests.slice(m.get(n)).filter((r) => r.path !== "/healthz")]),
    );
  const routes = (rs: RecordedRequest[] | undefined) => (rs ?? []).map((r) => `${r.method} ${r.path}`);

  return { secrets, clusters, conferences, bearer, codeOf, edge, marks, since, routes };
}
