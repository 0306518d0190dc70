// The validation blocks of terraform/variables.tf, rule for rule, in the same order and with the
// same messages ("{}" marks each interpolation). test/terraform/rules.test.ts compares these
// messages with the error_message templates in variables.tf, so the two cannot drift apart
// silently. Conditions are re-implemented here; IP and CIDR checks use shared/topology/address.ts
// where Terraform uses cidrhost() (both reject malformed addresses and out-of-range prefixes).
import { parseCidr, parseHostPort } from "../../shared/topology/address.ts";

export interface KubernetesIn {
  context: string;
  namespace: string;
  transceivers_min: number;
  transceivers_max: number;
  sessions_per_pod: number;
  relay_replicas: number;
  gateway_replicas: number;
  service_annotations: Record<string, string>;
  drain_seconds: number;
}

export interface ClusterIn {
  id: number;
  region: string;
  continent: string;
  countries: string[];
  latitude: number;
  longitude: number;
  capacity: number;
  signalling_url: string;
  backbone: string;
  backbone_cidrs: string[];
  vip: string | null;
  backend_url: string;
  kubernetes: KubernetesIn;
}

export interface PopAwsIn {
  vpc_id: string;
  public_subnet_ids: string[];
  private_subnet_ids: string[];
  instance_type: string;
  min_size: number;
  max_size: number;
  traffic_dial: number;
  redis_url: string | null;
}

export interface PopIn {
  id: number;
  region: string;
  latitude: number;
  longitude: number;
  vip: string | null;
  backbone: string;
  backbone_cidrs: string[];
  cluster: string | null;
  aws: PopAwsIn;
}

export interface EdgeIn {
  account_id: string;
  zone_id: string;
  worker_name: string;
  script_path: string;
  compatibility_date: string;
  compatibility_flags: string[];
  routes: string[];
  custom_domain: string | null;
  rate_limit: { namespace_id: string; limit: number; period: number };
  analytics_dataset: string;
}

/** Converted input variables (after tf-types.ts `convert`), as Terraform's validations see them. */
export interface Inputs {
  name_prefix: string;
  global_vip: string;
  default_cluster: string;
  deploy_cluster: string | null;
  kubeconfig_path: string;
  clusters: Record<string, ClusterIn>;
  pops: Record<string, PopIn>;
  anycast: { byoip: boolean; client_affinity: string };
  edge: EdgeIn;
  images: Record<string, string>;
  hint_keys: string;
  call_id_keys: string;
  cluster_secret: string;
  edge_secrets: Record<string, string>;
}

export interface Rule {
  variable: keyof Inputs;
  /** The message; each "{}" is one interpolation of the Terraform error_message. */
  message: string;
  /** null when the rule holds, else the values of the message's "{}" slots. */
  check(v: Inputs): string[] | null;
}

// ---------------------------------------------------------------- Terraform's helpers, mirrored

/** "${x}" of a number or string, as Terraform prints it. */
export const tfString = (x: number | string | null): string => (x === null ? "null" : String(x));

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[0-9.]+):[0-9]{1,5}$/;

/** The condition terraform/variables.tf writes out for an "ip:port" value. */
export function validHostPort(s: string): boolean {
  return HOST_PORT.test(s) && typeof parseHostPort(s) !== "string";
}

/** can(cidrhost(x, 0)) && !endswith(x, "/0") */
export function validBackboneCidr(s: string): boolean {
  return typeof parseCidr(s) !== "string" && !s.endsWith("/0");
}

const portOf = (s: string): string | null => /[0-9]+$/.exec(s)?.[0] ?? null;
const whole = (n: number): boolean => n === Math.floor(n);
const entries = <T>(m: Record<string, T>): [string, T][] =>
  Object.keys(m)
    .sort()
    .map((k) => [k, m[k]!]);
/** `{ for k, x in m : key(x) => k... }` then the groups with more than one key, keys in lexical order. */
function repeated<T>(m: Record<string, T>, key: (x: T) => string): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const [k, x] of entries(m)) {
    const g = key(x);
    groups.set(g, [...(groups.get(g) ?? []), k]);
  }
  return [...groups.entries()]
    .filter(([, ks]) => ks.length > 1)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
/** A rule over a list of offenders: holds when the list is empty, else one slot "a, b, c". */
const offenders = (list: string[]): string[] | null => (list.length === 0 ? null : [list.join(", ")]);
const when = (ok: boolean, slots: string[] = []): string[] | null => (ok ? null : slots);

const KEYRING = /^[0-9]{1,5}:[A-Za-z0-9+/_-]{43,}={0,2}(,[0-9]{1,5}:[A-Za-z0-9+/_-]{43,}={0,2})*$/;
const CONTINENTS = ["AF", "AN", "AS", "EU", "NA", "OC", "SA"];
const RESERVED_BINDINGS = [
  "GR_CLUSTER_SECRET",
  "GR_CALL_ID_KEYS",
  "TOPOLOGY",
  "TOPOLOGY_KV",
  "RATE_LIMITER",
  "ANALYTICS",
];
const IMAGE = /^[a-z0-9][a-z0-9./_-]*(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[0-9a-f]{64})?$/;
const IMAGE_PINNED = /(:[A-Za-z0-9_][A-Za-z0-9._-]*|@sha256:[0-9a-f]{64})$/;

const coordsOk = (x: { latitude: number; longitude: number }): boolean =>
  x.latitude >= -90 && x.latitude <= 90 && x.longitude >= -180 && x.longitude <= 180;

const k8sOk = (k: KubernetesIn): boolean =>
  k.context.trim().length > 0 &&
  NAME.test(k.namespace) &&
  k.transceivers_min >= 1 &&
  k.transceivers_min <= k.transceivers_max &&
  k.transceivers_max <= 65535 &&
  k.sessions_per_pod >= 1 &&
  k.relay_replicas >= 1 &&
  k.gateway_replicas >= 1 &&
  k.drain_seconds >= 0 &&
  k.drain_seconds <= 3600;

const awsOk = (a: PopAwsIn): boolean =>
  /^vpc-[0-9a-f]+$/.test(a.vpc_id) &&
  a.public_subnet_ids.length > 0 &&
  a.private_subnet_ids.length > 0 &&
  [...a.public_subnet_ids, ...a.private_subnet_ids].every((s) => /^subnet-[0-9a-f]+$/.test(s)) &&
  /^[a-z][a-z0-9-]*\.[a-z0-9]+$/.test(a.instance_type) &&
  a.min_size >= 1 &&
  a.min_size <= a.max_size &&
  a.max_size <= 100 &&
  a.traffic_dial >= 0 &&
  a.traffic_dial <= 100 &&
  (a.redis_url === null || /^rediss?:\/\//.test(a.redis_url));

const capacityOk = (c: ClusterIn): boolean =>
  whole(c.capacity) &&
  c.capacity >= 1 &&
  c.capacity <= 10000000 &&
  c.capacity <= c.kubernetes.transceivers_max * c.kubernetes.sessions_per_pod;

const cidrOffenders = (what: string, m: Record<string, { backbone_cidrs: string[] }>): string[] =>
  entries(m).flatMap(([k, x]) => [
    ...(x.backbone_cidrs.length === 0 ? [`${what}.${k}.backbone_cidrs (empty)`] : []),
    ...x.backbone_cidrs.filter((c) => !validBackboneCidr(c)).map((c) => `${what}.${k}.backbone_cidrs ${c}`),
  ]);

const addressOffenders = (
  what: string,
  m: Record<string, { backbone: string; vip: string | null }>,
): string[] => [
  ...entries(m)
    .filter(([, x]) => !validHostPort(x.backbone))
    .map(([k, x]) => `${what}.${k}.backbone = ${x.backbone}`),
  ...entries(m)
    .filter(([, x]) => x.vip !== null && !validHostPort(x.vip))
    .map(([k, x]) => `${what}.${k}.vip = ${x.vip}`),
];

// ---------------------------------------------------------------- the rules, in variables.tf order

export const RULES: Rule[] = [
  {
    variable: "name_prefix",
    message:
      "name_prefix must be lower-case letters, digits and '-', 2-20 characters, starting with a letter; got {}.",
    check: (v) => when(/^[a-z][a-z0-9-]{1,19}$/.test(v.name_prefix), [v.name_prefix]),
  },
  {
    variable: "global_vip",
    message:
      'global_vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; got {}.',
    check: (v) => when(validHostPort(v.global_vip), [v.global_vip]),
  },
  {
    variable: "default_cluster",
    message: "default_cluster must be a key of clusters; got {}.",
    check: (v) => when(v.default_cluster in v.clusters, [v.default_cluster]),
  },
  {
    variable: "deploy_cluster",
    message: "deploy_cluster must be null (the global stack) or a key of clusters; got {}.",
    check: (v) =>
      when(v.deploy_cluster === null || v.deploy_cluster in v.clusters, [v.deploy_cluster ?? "null"]),
  },
  {
    variable: "kubeconfig_path",
    message: "kubeconfig_path must be a non-empty path.",
    check: (v) => when(v.kubeconfig_path.trim().length > 0),
  },
  // ---- clusters
  {
    variable: "clusters",
    message: "At least one cluster is required in clusters.",
    check: (v) => when(Object.keys(v.clusters).length > 0),
  },
  {
    variable: "clusters",
    message:
      "Cluster keys (the cluster name) must be lower-case letters, digits and '-', 1-63 characters, starting with a letter or digit; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([k]) => !NAME.test(k))
          .map(([k]) => `clusters.${k}`),
      ),
  },
  {
    variable: "clusters",
    message: "Cluster ids must be whole numbers from 1 to 65535; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !(whole(c.id) && c.id >= 1 && c.id <= 65535))
          .map(([k, c]) => `clusters.${k}.id = ${tfString(c.id)}`),
      ),
  },
  {
    variable: "clusters",
    message: "Cluster ids must be unique (the id is carried in every hint and call id); repeated: {}.",
    check: (v) =>
      offenders(
        repeated(v.clusters, (c) => tfString(c.id)).map(
          ([id, ks]) => `id ${id} in clusters.${ks.join(" and clusters.")}`,
        ),
      ),
  },
  {
    variable: "clusters",
    message: "Cluster regions must be lower-case letters, digits and '-', 1-63 characters; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !NAME.test(c.region))
          .map(([k, c]) => `clusters.${k}.region = ${c.region}`),
      ),
  },
  {
    variable: "clusters",
    message: "Cluster continents must be one of AF, AN, AS, EU, NA, OC, SA; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !CONTINENTS.includes(c.continent))
          .map(([k, c]) => `clusters.${k}.continent = ${c.continent}`),
      ),
  },
  {
    variable: "clusters",
    message: 'Cluster countries must be ISO 3166 alpha-2 codes in capitals such as "DE"; not valid: {}.',
    check: (v) =>
      offenders(
        entries(v.clusters).flatMap(([k, c]) =>
          c.countries.filter((x) => !/^[A-Z]{2}$/.test(x)).map((x) => `clusters.${k}.countries ${x}`),
        ),
      ),
  },
  {
    variable: "clusters",
    message: "Cluster latitude must be between -90 and 90 and longitude between -180 and 180; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !coordsOk(c))
          .map(
            ([k, c]) =>
              `clusters.${k} (latitude ${tfString(c.latitude)}, longitude ${tfString(c.longitude)})`,
          ),
      ),
  },
  {
    variable: "clusters",
    message:
      "Cluster capacity must be a whole number of sessions from 1 to 10000000, and at most kubernetes.transceivers_max times kubernetes.sessions_per_pod; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !capacityOk(c))
          .map(([k, c]) => `clusters.${k}.capacity = ${tfString(c.capacity)}`),
      ),
  },
  {
    variable: "clusters",
    message:
      'Cluster signalling_url must be an http(s) URL such as "https://fra1.signal.example.net"; not valid: {}.',
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(c.signalling_url))
          .map(([k, c]) => `clusters.${k}.signalling_url = ${c.signalling_url}`),
      ),
  },
  {
    variable: "clusters",
    message: "Cluster backend_url must be a ws:// or wss:// URL of the voice backend; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !/^wss?:\/\/[^\s/]+(\/\S*)?$/.test(c.backend_url))
          .map(([k, c]) => `clusters.${k}.backend_url = ${c.backend_url}`),
      ),
  },
  {
    variable: "clusters",
    message:
      'Cluster backbone and vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; not valid: {}.',
    check: (v) => offenders(addressOffenders("clusters", v.clusters)),
  },
  {
    variable: "clusters",
    message:
      'Cluster backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as "203.0.113.0/24" or "2001:db8::/48"; not valid: {}.',
    check: (v) => offenders(cidrOffenders("clusters", v.clusters)),
  },
  {
    variable: "clusters",
    message:
      "Cluster kubernetes settings need a non-empty context, a namespace of lower-case letters, digits and '-', 1 <= transceivers_min <= transceivers_max <= 65535, sessions_per_pod, relay_replicas and gateway_replicas of at least 1, and drain_seconds from 0 to 3600; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.clusters)
          .filter(([, c]) => !k8sOk(c.kubernetes))
          .map(([k]) => `clusters.${k}.kubernetes`),
      ),
  },
  // ---- pops
  {
    variable: "pops",
    message: "At least one POP is required in pops.",
    check: (v) => when(Object.keys(v.pops).length > 0),
  },
  {
    variable: "pops",
    message:
      "POP keys (the POP name) must be lower-case letters, digits and '-', 1-63 characters, starting with a letter or digit; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([k]) => !NAME.test(k))
          .map(([k]) => `pops.${k}`),
      ),
  },
  {
    variable: "pops",
    message: "POP ids must be whole numbers from 1 to 65535; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => !(whole(p.id) && p.id >= 1 && p.id <= 65535))
          .map(([k, p]) => `pops.${k}.id = ${tfString(p.id)}`),
      ),
  },
  {
    variable: "pops",
    message: "POP ids must be unique (the id is carried in every backbone frame); repeated: {}.",
    check: (v) =>
      offenders(
        repeated(v.pops, (p) => tfString(p.id)).map(
          ([id, ks]) => `id ${id} in pops.${ks.join(" and pops.")}`,
        ),
      ),
  },
  {
    variable: "pops",
    message: 'POP regions must be AWS region names such as "eu-central-1"; not valid: {}.',
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => !/^[a-z]{2}(-[a-z]+)+-[0-9]+$/.test(p.region))
          .map(([k, p]) => `pops.${k}.region = ${p.region}`),
      ),
  },
  {
    variable: "pops",
    message:
      "Only one POP per AWS region (Global Accelerator takes one endpoint group per region and listener); shared: {}.",
    check: (v) =>
      offenders(repeated(v.pops, (p) => p.region).map(([r, ks]) => `${r} by pops.${ks.join(" and pops.")}`)),
  },
  {
    variable: "pops",
    message: "POP latitude must be between -90 and 90 and longitude between -180 and 180; not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => !coordsOk(p))
          .map(
            ([k, p]) => `pops.${k} (latitude ${tfString(p.latitude)}, longitude ${tfString(p.longitude)})`,
          ),
      ),
  },
  {
    variable: "pops",
    message:
      'POP backbone and vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; not valid: {}.',
    check: (v) => offenders(addressOffenders("pops", v.pops)),
  },
  {
    variable: "pops",
    message:
      "A POP's vip port and backbone port must differ (both listen on the POP's load balancer); same port: {}.",
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => {
            const a = portOf(p.vip ?? v.global_vip);
            return a !== null && a === portOf(p.backbone);
          })
          .map(([k]) => `pops.${k}`),
      ),
  },
  {
    variable: "pops",
    message:
      'POP backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as "203.0.113.0/24" or "2001:db8::/48"; not valid: {}.',
    check: (v) => offenders(cidrOffenders("pops", v.pops)),
  },
  {
    variable: "pops",
    message: "POP cluster must be a key of clusters (the cluster co-located with the POP); unknown: {}.",
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => p.cluster !== null && !(p.cluster in v.clusters))
          .map(([k, p]) => `pops.${k}.cluster = ${p.cluster}`),
      ),
  },
  {
    variable: "pops",
    message:
      "A POP co-located with a cluster forwards straight to its transceivers and needs aws.redis_url (that cluster's Redis, where transceivers announce themselves); missing: {}.",
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => p.cluster !== null && p.aws.redis_url === null)
          .map(([k]) => `pops.${k}`),
      ),
  },
  {
    variable: "pops",
    message:
      'POP aws settings need vpc_id "vpc-...", at least one public and one private subnet "subnet-...", an instance_type such as "c6in.large", 1 <= min_size <= max_size <= 100, traffic_dial from 0 to 100, and redis_url (if set) starting with redis:// or rediss://; not valid: {}.',
    check: (v) =>
      offenders(
        entries(v.pops)
          .filter(([, p]) => !awsOk(p.aws))
          .map(([k]) => `pops.${k}.aws`),
      ),
  },
  // ---- the rest
  {
    variable: "anycast",
    message: "anycast.client_affinity must be NONE or SOURCE_IP; got {}.",
    check: (v) =>
      when(["NONE", "SOURCE_IP"].includes(v.anycast.client_affinity), [v.anycast.client_affinity]),
  },
  {
    variable: "edge",
    message:
      "edge.account_id and edge.zone_id must be 32 lower-case hex characters (Cloudflare dashboard, Overview); got {} and {}.",
    check: (v) =>
      when(/^[0-9a-f]{32}$/.test(v.edge.account_id) && /^[0-9a-f]{32}$/.test(v.edge.zone_id), [
        v.edge.account_id,
        v.edge.zone_id,
      ]),
  },
  {
    variable: "edge",
    message:
      "edge.worker_name must be lower-case letters, digits and '-', edge.compatibility_date a date YYYY-MM-DD, and edge.script_path non-empty; got {}, {}, {}.",
    check: (v) =>
      when(
        NAME.test(v.edge.worker_name) &&
          /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(v.edge.compatibility_date) &&
          v.edge.script_path.trim().length > 0,
        [v.edge.worker_name, v.edge.compatibility_date, v.edge.script_path],
      ),
  },
  {
    variable: "edge",
    message: "edge needs at least one route pattern or a custom_domain, or no request reaches the worker.",
    check: (v) => when(v.edge.routes.length > 0 || v.edge.custom_domain !== null),
  },
  {
    variable: "edge",
    message:
      "edge.rate_limit needs a positive integer namespace_id, a whole limit of at least 1 and a period of 10 or 60 seconds; got namespace_id {}, limit {}, period {}.",
    check: (v) => {
      const r = v.edge.rate_limit;
      return when(
        /^[1-9][0-9]{0,9}$/.test(r.namespace_id) &&
          [10, 60].includes(r.period) &&
          r.limit >= 1 &&
          whole(r.limit),
        [r.namespace_id, tfString(r.limit), tfString(r.period)],
      );
    },
  },
  {
    variable: "edge",
    message: "edge.analytics_dataset must be letters, digits and '_', 1-64 characters; got {}.",
    check: (v) => when(/^[A-Za-z0-9_]{1,64}$/.test(v.edge.analytics_dataset), [v.edge.analytics_dataset]),
  },
  {
    variable: "images",
    message:
      "images must be pinned references (a tag other than latest, or an @sha256 digest); not valid: {}.",
    check: (v) =>
      offenders(
        entries(v.images)
          .filter(([, x]) => !IMAGE.test(x) || !IMAGE_PINNED.test(x) || x.endsWith(":latest"))
          .map(([k, x]) => `images.${k} = ${x}`),
      ),
  },
  // ---- secrets (no values in messages: Terraform refuses to print sensitive values)
  {
    variable: "hint_keys",
    message:
      'hint_keys must be "id:base64,id:base64" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters).',
    check: (v) =>
      when(KEYRING.test(v.hint_keys) && v.hint_keys.split(",").every((e) => Number(e.split(":")[0]) <= 15)),
  },
  {
    variable: "call_id_keys",
    message:
      'call_id_keys must be "id:base64,id:base64" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters).',
    check: (v) =>
      when(
        KEYRING.test(v.call_id_keys) && v.call_id_keys.split(",").every((e) => Number(e.split(":")[0]) <= 15),
      ),
  },
  {
    variable: "cluster_secret",
    message: "cluster_secret must be base64 of at least 32 bytes (44 base64 characters).",
    check: (v) => when(/^[A-Za-z0-9+/_-]{43,}={0,2}$/.test(v.cluster_secret)),
  },
  {
    variable: "edge_secrets",
    message:
      "edge_secrets names must be upper-case letters, digits and '_' (starting with a letter) and must not reuse a binding the module sets itself (GR_CLUSTER_SECRET, GR_CALL_ID_KEYS, TOPOLOGY, TOPOLOGY_JSON, TOPOLOGY_KV, TOPOLOGY_KEY, RATE_LIMITER, ANALYTICS).",
    check: (v) =>
      when(
        Object.keys(v.edge_secrets).every(
          (k) => /^[A-Z][A-Z0-9_]{0,63}$/.test(k) && !RESERVED_BINDINGS.includes(k),
        ),
      ),
  },
];

/** Fills a rule's message slots. */
export function formatRule(rule: Rule, slots: string[]): string {
  let i = 0;
  return rule.message.replace(/\{\}/g, () => slots[i++] ?? "");
}
