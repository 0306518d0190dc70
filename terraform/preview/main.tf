# The topology preview: a root module with no provider, so it runs anywhere, offline. It reads the
# same tfvars as the deployment (terraform/), passes the topology inputs to modules/topology
# exactly as the deployment does, and outputs the same topology_json. Variables it does not
# declare (edge, images, ...) draw a warning, nothing more.
#
#   terraform -chdir=terraform/preview init -backend=false
#   terraform -chdir=terraform/preview plan -var-file=../examples/global.tfvars
#
# scripts/terraform/render-topology.ts runs it with its working files in a temporary directory.

terraform {
  required_version = ">= 1.9.0, < 2.0.0"
}

variable "global_vip" {
  description = "See modules/topology/variables.tf."
  type        = string
}

variable "default_cluster" {
  description = "See modules/topology/variables.tf."
  type        = string
}

variable "clusters" {
  description = "See modules/topology/variables.tf."
  type        = any
}

variable "pops" {
  description = "See modules/topology/variables.tf."
  type        = any
}

variable "vip_tcp_port" {
  description = "See modules/topology/variables.tf."
  type        = number
  default     = null
}

module "topology" {
  source = "../modules/topology"

  global_vip      = var.global_vip
  default_cluster = var.default_cluster
  clusters        = var.clusters
  pops            = var.pops
  vip_tcp_port    = var.vip_tcp_port
  as_written      = { clusters = var.clusters, pops = var.pops }
}

output "topology_json" {
  description = "The topology the deployment renders (terraform output -raw topology_json there)."
  value       = module.topology.topology_json
}

# Secrets never belong in a tfvars file. The preview runs without TF_VAR_* in its environment, so a
# value here can only come from a file: refuse it.
variable "hint_keys" {
  description = "Must stay unset here (a secret): see terraform/variables.tf."
  type        = any
  default     = null
  sensitive   = true
  validation {
    condition     = var.hint_keys == null
    error_message = "hint_keys is a secret: set TF_VAR_hint_keys in the environment of terraform apply, never in a tfvars file."
  }
}

variable "call_id_keys" {
  description = "Must stay unset here (a secret): see terraform/variables.tf."
  type        = any
  default     = null
  sensitive   = true
  validation {
    condition     = var.call_id_keys == null
    error_message = "call_id_keys is a secret: set TF_VAR_call_id_keys in the environment of terraform apply, never in a tfvars file."
  }
}

variable "cluster_secret" {
  description = "Must stay unset here (a secret): see terraform/variables.tf."
  type        = any
  default     = null
  sensitive   = true
  validation {
    condition     = var.cluster_secret == null
    error_message = "cluster_secret is a secret: set TF_VAR_cluster_secret in the environment of terraform apply, never in a tfvars file."
  }
}

variable "backbone_keys" {
  description = "Must stay unset here (a secret): see terraform/variables.tf."
  type        = any
  default     = null
  sensitive   = true
  validation {
    condition     = var.backbone_keys == null
    error_message = "backbone_keys is a secret: set TF_VAR_backbone_keys in the environment of terraform apply, never in a tfvars file."
  }
}

variable "edge_secrets" {
  description = "Must stay unset here (a secret): see terraform/variables.tf."
  type        = any
  default     = null
  sensitive   = true
  validation {
    condition     = var.edge_secrets == null
    error_message = "edge_secrets is a secret: set TF_VAR_edge_secrets in the environment of terraform apply, never in a tfvars file."
  }
}
