output "summary" {
  description = "Worker name, KV namespace id and whether the topology is also bound inline."
  value = {
    worker          = cloudflare_workers_script.edge.script_name
    kv_namespace_id = cloudflare_workers_kv_namespace.topology.id
    topology_inline = local.topology_inline
    routes          = var.routes
    custom_domain   = var.custom_domain
  }
}
