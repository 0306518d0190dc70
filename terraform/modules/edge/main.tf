# The signalling edge: the Worker bundle from `wrangler deploy --dry-run --outdir dist/edge`, its
# bindings, and how requests reach it. Binding names are the ones edge/ reads (wrangler.toml).

locals {
  # A Worker text binding holds at most 5 KiB; a larger topology is served from KV alone.
  topology_inline = length(var.topology_json) <= 5000

  bindings = concat(
    [
      { type = "kv_namespace", name = "TOPOLOGY_KV", namespace_id = cloudflare_workers_kv_namespace.topology.id },
      { type = "plain_text", name = "TOPOLOGY_KEY", text = cloudflare_workers_kv.topology.key_name },
      { type = "secret_text", name = "GR_CLUSTER_SECRET", text = var.cluster_secret },
      { type = "secret_text", name = "GR_CALL_ID_KEYS", text = var.call_id_keys },
      {
        type         = "ratelimit"
        name         = "RATE_LIMITER"
        namespace_id = var.rate_limit.namespace_id
        simple       = { limit = var.rate_limit.limit, period = var.rate_limit.period }
      },
      { type = "analytics_engine", name = "ANALYTICS", dataset = var.analytics_dataset },
    ],
    local.topology_inline ? [{ type = "plain_text", name = "TOPOLOGY", text = var.topology_json }] : [],
    [for name in sort(nonsensitive(keys(var.extra_secrets))) : { type = "secret_text", name = name, text = var.extra_secrets[name] }],
  )
}

resource "cloudflare_workers_kv_namespace" "topology" {
  account_id = var.account_id
  title      = "${var.worker_name}-topology"
}

resource "cloudflare_workers_kv" "topology" {
  account_id   = var.account_id
  namespace_id = cloudflare_workers_kv_namespace.topology.id
  key_name     = "topology.json"
  value        = var.topology_json
}

resource "cloudflare_workers_script" "edge" {
  account_id          = var.account_id
  script_name         = var.worker_name
  content_file        = var.script_path
  content_sha256      = filesha256(var.script_path)
  main_module         = basename(var.script_path)
  compatibility_date  = var.compatibility_date
  compatibility_flags = var.compatibility_flags
  bindings            = local.bindings

  # The Worker reads the topology at start: upload the new value before the new script.
  depends_on = [cloudflare_workers_kv.topology]
}

resource "cloudflare_workers_route" "edge" {
  for_each = toset(var.routes)

  zone_id = var.zone_id
  pattern = each.value
  script  = cloudflare_workers_script.edge.script_name
}

resource "cloudflare_workers_custom_domain" "edge" {
  count = var.custom_domain == null ? 0 : 1

  account_id = var.account_id
  zone_id    = var.zone_id
  hostname   = var.custom_domain
  service    = cloudflare_workers_script.edge.script_name
}
