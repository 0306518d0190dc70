# Every input, converted to its type with its defaults filled: the root module reads these, never
# its own raw variables.

output "name_prefix" {
  description = "var.name_prefix (default \"gr\")."
  value       = var.name_prefix
}

output "deploy_cluster" {
  description = "var.deploy_cluster: null for the global stack, else the cluster key."
  value       = var.deploy_cluster
}

output "kubeconfig_path" {
  description = "var.kubeconfig_path (default ~/.kube/config)."
  value       = var.kubeconfig_path
}

output "anycast" {
  description = "var.anycast with its defaults."
  value       = var.anycast
}

output "edge" {
  description = "var.edge with its defaults."
  value       = var.edge
}

output "images" {
  description = "var.images with its defaults."
  value       = var.images
}

output "conference" {
  description = "var.conference with its defaults, or null (no conferences)."
  value       = var.conference
}

output "hint_keys" {
  description = "var.hint_keys (validated)."
  value       = var.hint_keys
  sensitive   = true
}

output "call_id_keys" {
  description = "var.call_id_keys (validated)."
  value       = var.call_id_keys
  sensitive   = true
}

output "cluster_secret" {
  description = "var.cluster_secret (validated)."
  value       = var.cluster_secret
  sensitive   = true
}

output "edge_secrets" {
  description = "var.edge_secrets (validated)."
  value       = var.edge_secrets
  sensitive   = true
}

output "backbone_keys" {
  description = "var.backbone_keys (validated), or null."
  value       = var.backbone_keys
  sensitive   = true
}
