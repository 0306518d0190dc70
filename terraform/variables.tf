# Inputs of the Global Relay deployment. Every one is typed, defaulted and validated in a module
# that needs no provider, so `terraform test` checks the validations offline and there is one
# definition of each:
#   modules/topology  global_vip, default_cluster, clusters, pops (and renders the topology);
#   modules/settings  name_prefix, deploy_cluster, kubeconfig_path, anycast, edge, images,
#                     conference, secrets.
# The variables here only pass values through (objects as `any`, so the module's type is the only
# one), and main.tf reads every input back from those modules' outputs. Descriptions, types,
# defaults and the validation messages are in the modules' variables.tf.
#
# Secrets come only from the environment (TF_VAR_hint_keys, ...) or a secret store, never from a
# tfvars file.

variable "global_vip" {
  description = "The Global Relay VIP, \"ip:port\" (modules/topology/variables.tf)."
  type        = string
}

variable "default_cluster" {
  description = "Key of the cluster the edge steers to when it knows nothing about the client (modules/topology/variables.tf)."
  type        = string
}

variable "clusters" {
  description = "Regional clusters, keyed by cluster name (type and validations: modules/topology/variables.tf)."
  type        = any
}

variable "pops" {
  description = "Global Relay POPs, keyed by POP name (type and validations: modules/topology/variables.tf)."
  type        = any
}

variable "vip_tcp_port" {
  description = "TCP port of ICE-TCP on the VIP, or null for none (modules/topology/variables.tf)."
  type        = number
  default     = null
}

variable "name_prefix" {
  description = "Prefix of every cloud resource name; null means \"gr\" (modules/settings/variables.tf)."
  type        = string
  default     = null
}

variable "deploy_cluster" {
  description = "Which stack this run applies: null for the global stack, or a key of clusters for that cluster's stack (modules/settings/variables.tf, docs/operations/deploy.md)."
  type        = string
  default     = null
}

variable "kubeconfig_path" {
  description = "Kubeconfig used by the cluster stack; null means ~/.kube/config (modules/settings/variables.tf)."
  type        = string
  default     = null
}

variable "anycast" {
  description = "The anycast ingress: byoip, client_affinity (type and validations: modules/settings/variables.tf)."
  type        = any
  default     = null
}

variable "edge" {
  description = "The Cloudflare Worker that terminates signalling (type and validations: modules/settings/variables.tf)."
  type        = any
}

variable "images" {
  description = "Container images, pinned by tag or digest (type and validations: modules/settings/variables.tf)."
  type        = any
}

variable "conference" {
  description = "Conferences (several participants in one call): port, max_participants, nack, address; null for none (type and validations: modules/settings/variables.tf, docs/operations/conferences.md)."
  type        = any
  default     = null
}

# ---- Secrets: sensitive, no defaults (but backbone_keys: null, needed only with conference), only
# from the environment (TF_VAR_...) or a secret store.

variable "hint_keys" {
  description = "GR_HINT_KEYS: routing-hint keyring \"id:base64,id:base64\". Set TF_VAR_hint_keys; never in a file."
  type        = string
  sensitive   = true
}

variable "call_id_keys" {
  description = "GR_CALL_ID_KEYS: call-id keyring \"id:base64,id:base64\". Set TF_VAR_call_id_keys; never in a file."
  type        = string
  sensitive   = true
}

variable "cluster_secret" {
  description = "GR_CLUSTER_SECRET: keyring \"id:base64,...\" whose first key signs every edge-to-cluster request (all verify), or one base64 secret. Set TF_VAR_cluster_secret; never in a file."
  type        = string
  sensitive   = true
}

variable "backbone_keys" {
  description = "GR_BACKBONE_KEYS: conference-frame keyring \"id:base64,id:base64\", the same on every cluster; needed only with conference (so the one secret with a default, null). Set TF_VAR_backbone_keys; never in a file."
  type        = string
  default     = null
  sensitive   = true
}

variable "edge_secrets" {
  description = "Further Worker secrets by binding name (API_KEY_HASHES, CLIENT_SECRET_KEY, METRICS_TOKEN). Set TF_VAR_edge_secrets='{}' when there are none; never in a file."
  type        = map(string)
  sensitive   = true
}
