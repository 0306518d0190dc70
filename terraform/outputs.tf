# The topology every component loads (TOPOLOGY_FILE for relays and transceivers, KV / a variable
# for the edge) is rendered by modules/topology, in the exact shape of shared/topology/schema.ts.
# terraform/preview renders the same bytes offline (scripts/terraform/render-topology.ts runs it).

output "topology_json" {
  description = "The rendered topology (shared/topology/schema.ts) as compact JSON: `terraform output -raw topology_json > topology.json`."
  value       = module.topology.topology_json
}

output "topology" {
  description = "The rendered topology as an object, for other Terraform configurations."
  value       = module.topology.topology
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
