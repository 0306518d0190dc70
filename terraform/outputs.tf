# The topology every component loads (TOPOLOGY_FILE for relays and transceivers, KV / a variable
# for the edge), in the exact shape of shared/topology/schema.ts. Lists follow the map keys in
# lexical order (Terraform iterates maps that way); optional fields are left out, not null.
# scripts/terraform/render-topology.ts mirrors this expression: change both together.
locals {
  topology = {
    version          = 1
    globalVip        = var.global_vip
    defaultClusterId = var.clusters[var.default_cluster].id
    clusters = [for name, c in var.clusters : merge(
      {
        id            = c.id
        name          = name
        region        = c.region
        continent     = c.continent
        countries     = c.countries
        latitude      = c.latitude
        longitude     = c.longitude
        signallingUrl = c.signalling_url
        backbone      = c.backbone
        backboneCidrs = c.backbone_cidrs
        capacity      = c.capacity
      },
      { for k, v in { vip = c.vip } : k => v if v != null },
    )]
    pops = [for name, p in var.pops : merge(
      {
        id            = p.id
        name          = name
        region        = p.region
        latitude      = p.latitude
        longitude     = p.longitude
        vip           = coalesce(p.vip, var.global_vip)
        backbone      = p.backbone
        backboneCidrs = p.backbone_cidrs
      },
      { for k, v in { clusterId = try(var.clusters[p.cluster].id, null) } : k => v if v != null },
    )]
  }
  topology_json = jsonencode(local.topology)
}

output "topology_json" {
  description = "The rendered topology (shared/topology/schema.ts) as compact JSON: `terraform output -raw topology_json > topology.json`."
  value       = local.topology_json
}

output "topology" {
  description = "The rendered topology as an object, for other Terraform configurations."
  value       = local.topology
}

output "anycast_ip_addresses" {
  description = "Static addresses of the accelerator (global stack only); global_vip must be one of them."
  value       = one(module.anycast[*].ip_addresses)
}

output "anycast_dns_name" {
  description = "DNS name of the accelerator (global stack only)."
  value       = one(module.anycast[*].dns_name)
}

output "pops" {
  description = "Per POP: load balancer DNS name, backbone address and the relay group (global stack only)."
  value       = { for k, m in module.pop : k => m.summary }
}

output "edge_worker" {
  description = "Name of the edge Worker script and the KV namespace that holds the topology (global stack only)."
  value       = one(module.edge[*].summary)
}

output "cluster" {
  description = "The applied cluster's namespace and Services (cluster stack only)."
  value       = { for k, m in module.cluster : k => m.summary }
}
