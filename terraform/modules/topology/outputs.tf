output "topology_json" {
  description = "The rendered topology (shared/topology/schema.ts) as compact JSON."
  value       = jsonencode(local.topology)
}

output "topology" {
  description = "The rendered topology as an object."
  value       = local.topology
}

output "clusters" {
  description = "var.clusters converted to its type: every optional attribute present, with its default or null."
  value       = var.clusters
}

output "pops" {
  description = "var.pops converted to its type: every optional attribute present, with its default or null."
  value       = var.pops
}
