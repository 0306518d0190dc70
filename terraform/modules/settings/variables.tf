# The deployment's settings and secrets, typed, defaulted and validated here and only here: the
# root module (terraform/variables.tf) passes them through. `terraform test` in this directory
# checks every validation offline (tests/*.tftest.hcl).
#
# Secrets are validated here rather than in the root on purpose: Terraform (1.11) prints a root
# variable's value next to a failed validation even when it is sensitive, but shows a module
# variable's sensitive value as hidden. Secrets come only from the environment (TF_VAR_hint_keys,
# ...), never from a tfvars file.

variable "name_prefix" {
  description = "Prefix of every cloud resource name (lower-case letters, digits, '-'; 2-20 characters, starting with a letter)."
  type        = string
  default     = "gr"
  nullable    = false
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,19}$", var.name_prefix))
    error_message = "name_prefix must be lower-case letters, digits and '-', 2-20 characters, starting with a letter; got ${var.name_prefix}."
  }
}

variable "cluster_names" {
  description = "Keys of clusters (modules/topology), for deploy_cluster's validation."
  type        = list(string)
}

variable "deploy_cluster" {
  description = "Which stack this run applies: null for the global stack (edge worker, anycast, every POP), or a key of clusters to apply that cluster's Kubernetes resources (one state per cluster, see docs/operations/deploy.md)."
  type        = string
  default     = null
  validation {
    condition     = var.deploy_cluster == null || contains(var.cluster_names, coalesce(var.deploy_cluster, "-"))
    error_message = "deploy_cluster must be null (the global stack) or a key of clusters; got ${coalesce(var.deploy_cluster, "null")}."
  }
}

variable "kubeconfig_path" {
  description = "Kubeconfig used by the cluster stack; the context comes from clusters[deploy_cluster].kubernetes.context."
  type        = string
  default     = "~/.kube/config"
  nullable    = false
  validation {
    condition     = length(trimspace(var.kubeconfig_path)) > 0
    error_message = "kubeconfig_path must be a non-empty path."
  }
}

variable "anycast" {
  description = "The anycast ingress (AWS Global Accelerator, one UDP listener on the global_vip port, and a TCP listener on vip_tcp_port when that is set). byoip = true binds global_vip itself (bring-your-own-IP pool); false lets AWS assign two static IPs (then set global_vip to one of them and apply again). client_affinity SOURCE_IP keeps a client on one POP when its NAT port changes."
  type = object({
    byoip           = optional(bool, true)
    client_affinity = optional(string, "SOURCE_IP")
  })
  default  = {}
  nullable = false
  validation {
    condition     = contains(["NONE", "SOURCE_IP"], var.anycast.client_affinity)
    error_message = "anycast.client_affinity must be NONE or SOURCE_IP; got ${var.anycast.client_affinity}."
  }
}

variable "edge" {
  description = <<-EOT
    The Cloudflare Worker that terminates signalling (edge/). script_path is the wrangler build
    output (`npx wrangler deploy --dry-run --outdir dist/edge`), relative to terraform/.
    routes are zone route patterns; custom_domain an optional hostname served by the worker.
    rate_limit configures the Workers rate-limit binding (period 10 or 60 seconds);
    analytics_dataset the Analytics Engine dataset the worker writes timings to.
  EOT
  type = object({
    account_id          = string
    zone_id             = string
    worker_name         = optional(string, "global-relay-edge")
    script_path         = optional(string, "../dist/edge/index.js")
    compatibility_date  = string
    compatibility_flags = optional(list(string), ["nodejs_compat"])
    routes              = optional(list(string), [])
    custom_domain       = optional(string)
    rate_limit = optional(object({
      namespace_id = string
      limit        = number
      period       = number
    }), { namespace_id = "1001", limit = 600, period = 60 })
    analytics_dataset = optional(string, "global_relay")
  })
  validation {
    condition     = can(regex("^[0-9a-f]{32}$", var.edge.account_id)) && can(regex("^[0-9a-f]{32}$", var.edge.zone_id))
    error_message = "edge.account_id and edge.zone_id must be 32 lower-case hex characters (Cloudflare dashboard, Overview); got ${var.edge.account_id} and ${var.edge.zone_id}."
  }
  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,62}$", var.edge.worker_name)) && can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}$", var.edge.compatibility_date)) && length(trimspace(var.edge.script_path)) > 0
    error_message = "edge.worker_name must be lower-case letters, digits and '-', edge.compatibility_date a date YYYY-MM-DD, and edge.script_path non-empty; got ${var.edge.worker_name}, ${var.edge.compatibility_date}, ${var.edge.script_path}."
  }
  validation {
    condition     = length(var.edge.routes) > 0 || var.edge.custom_domain != null
    error_message = "edge needs at least one route pattern or a custom_domain, or no request reaches the worker."
  }
  validation {
    condition     = can(regex("^[1-9][0-9]{0,9}$", var.edge.rate_limit.namespace_id)) && contains([10, 60], var.edge.rate_limit.period) && var.edge.rate_limit.limit >= 1 && var.edge.rate_limit.limit == floor(var.edge.rate_limit.limit)
    error_message = "edge.rate_limit needs a positive integer namespace_id, a whole limit of at least 1 and a period of 10 or 60 seconds; got namespace_id ${var.edge.rate_limit.namespace_id}, limit ${var.edge.rate_limit.limit}, period ${var.edge.rate_limit.period}."
  }
  validation {
    condition     = can(regex("^[A-Za-z0-9_]{1,64}$", var.edge.analytics_dataset))
    error_message = "edge.analytics_dataset must be letters, digits and '_', 1-64 characters; got ${var.edge.analytics_dataset}."
  }
}

variable "images" {
  description = "Container images built from regional/Dockerfile.relay and regional/Dockerfile.transceiver (and Redis), pinned by tag or digest; never :latest."
  type = object({
    relay       = string
    transceiver = string
    redis       = optional(string, "redis:7.4-alpine")
  })
  validation {
    condition     = length([for k, v in var.images : k if !can(regex("^[a-z0-9][a-z0-9./_-]*(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[0-9a-f]{64})?$", v)) || !can(regex("(:[A-Za-z0-9_][A-Za-z0-9._-]*|@sha256:[0-9a-f]{64})$", v)) || endswith(v, ":latest")]) == 0
    error_message = "images must be pinned references (a tag other than latest, or an @sha256 digest); not valid: ${join(", ", [for k, v in var.images : "images.${k} = ${v}" if !can(regex("^[a-z0-9][a-z0-9./_-]*(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[0-9a-f]{64})?$", v)) || !can(regex("(:[A-Za-z0-9_][A-Za-z0-9._-]*|@sha256:[0-9a-f]{64})$", v)) || endswith(v, ":latest")])}."
  }
}

variable "conference" {
  description = <<-EOT
    Conferences (several participants in one call, docs/operations/conferences.md), or null for
    none: the transceivers then get no conference socket and the participant routes answer 503
    conference_unavailable. Set, every cluster stack gives its transceivers a UDP conference port
    open only to the other clusters' backbone_cidrs (and this cluster's transceivers), and needs
    backbone_keys (TF_VAR_backbone_keys).
      port             UDP port of the conference socket (TRANSCEIVER_CONFERENCE_PORT), 1024-65535,
                       not the transceiver's backbone port 3479
      max_participants participants per call, the owner's client included (CONFERENCE_MAX_PARTICIPANTS), 2-64
      nack             per-hop repair by NACK (CONFERENCE_NACK); false only to measure without it
      address          what a transceiver advertises (TRANSCEIVER_CONFERENCE_ADDR): "pod", its pod
                       IP (pod networks routed between clusters), or "node", its node's IP with the
                       port as a hostPort (one transceiver per node); that address must be inside
                       its cluster's backbone_cidrs, or hubs refuse the leg's hello (bad_address)
  EOT
  type = object({
    port             = optional(number, 3480)
    max_participants = optional(number, 8)
    nack             = optional(bool, true)
    address          = optional(string, "pod")
  })
  default = null
  validation {
    condition     = var.conference == null || try(var.conference.port == floor(var.conference.port) && var.conference.port >= 1024 && var.conference.port <= 65535 && var.conference.port != 3479, false)
    error_message = "conference.port must be a whole UDP port from 1024 to 65535 (the transceiver runs without privileges) other than 3479 (its backbone port); got ${try(var.conference.port, "null")}."
  }
  validation {
    condition     = var.conference == null || try(var.conference.max_participants == floor(var.conference.max_participants) && var.conference.max_participants >= 2 && var.conference.max_participants <= 64, false)
    error_message = "conference.max_participants must be a whole number from 2 to 64 (the owner's client included); got ${try(var.conference.max_participants, "null")}."
  }
  validation {
    condition     = var.conference == null || try(contains(["pod", "node"], var.conference.address), false)
    error_message = "conference.address must be \"pod\" (advertise the pod IP) or \"node\" (the node IP, with a hostPort); got ${try(var.conference.address, "null")}."
  }
  validation {
    condition     = var.conference == null || var.backbone_keys != null
    error_message = "conference needs the backbone keyring: set TF_VAR_backbone_keys (GR_BACKBONE_KEYS, the same on every cluster), or leave conference null."
  }
}

# ---- Secrets: sensitive, no defaults (but backbone_keys: null, needed only with conference), only
# from the environment (TF_VAR_...) or a secret store.

variable "hint_keys" {
  description = "GR_HINT_KEYS: routing-hint keyring \"id:base64,id:base64\" (ids 0-15, first is active, each secret at least 32 bytes). Set TF_VAR_hint_keys; never in a file."
  type        = string
  sensitive   = true
  validation {
    condition     = can(regex("^[0-9]{1,5}:[A-Za-z0-9+/_-]{43,}={0,2}(,[0-9]{1,5}:[A-Za-z0-9+/_-]{43,}={0,2})*$", var.hint_keys)) && alltrue([for e in split(",", var.hint_keys) : try(tonumber(split(":", e)[0]) <= 15, false)])
    error_message = "hint_keys must be \"id:base64,id:base64\" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters)."
  }
}

variable "call_id_keys" {
  description = "GR_CALL_ID_KEYS: call-id keyring \"id:base64,id:base64\" (first is active, each secret at least 32 bytes). Set TF_VAR_call_id_keys; never in a file."
  type        = string
  sensitive   = true
  validation {
    condition     = can(regex("^[0-9]{1,5}:[A-Za-z0-9+/_-]{43,}={0,2}(,[0-9]{1,5}:[A-Za-z0-9+/_-]{43,}={0,2})*$", var.call_id_keys)) && alltrue([for e in split(",", var.call_id_keys) : try(tonumber(split(":", e)[0]) <= 15, false)])
    error_message = "call_id_keys must be \"id:base64,id:base64\" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters)."
  }
}

variable "cluster_secret" {
  description = "GR_CLUSTER_SECRET: keyring \"id:base64,id:base64\" (ids 0-255, each secret at least 32 bytes; the first signs every edge-to-cluster request, all verify), or one base64 secret (key id 0). Rotation: docs/operations/deploy.md. Set TF_VAR_cluster_secret; never in a file."
  type        = string
  sensitive   = true
  validation {
    condition     = can(regex("^[A-Za-z0-9+/_-]{43,}={0,2}$", var.cluster_secret)) || (can(regex("^[0-9]{1,3}:[A-Za-z0-9+/_-]{43,}={0,2}(,[0-9]{1,3}:[A-Za-z0-9+/_-]{43,}={0,2})*$", var.cluster_secret)) && alltrue([for e in split(",", var.cluster_secret) : try(tonumber(split(":", e)[0]) <= 255, false)]))
    error_message = "cluster_secret must be a keyring \"id:base64,id:base64\" with ids 0-255 and secrets of at least 32 bytes (44 base64 characters), or one such base64 secret."
  }
  validation {
    condition     = length(distinct([for e in split(",", var.cluster_secret) : split(":", e)[0]])) == length(split(",", var.cluster_secret))
    error_message = "cluster_secret lists a key id more than once."
  }
}

variable "backbone_keys" {
  description = "GR_BACKBONE_KEYS: conference-frame MAC keyring \"id:base64,id:base64\" (ids 0-15, first is active, each secret at least 32 bytes), the same on every cluster; null when conference is null. Rotation: docs/operations/conferences.md. Set TF_VAR_backbone_keys; never in a file."
  type        = string
  default     = null
  sensitive   = true
  validation {
    condition     = var.backbone_keys == null || (can(regex("^[0-9]{1,2}:[A-Za-z0-9+/_-]{43,}={0,2}(,[0-9]{1,2}:[A-Za-z0-9+/_-]{43,}={0,2})*$", var.backbone_keys)) && alltrue([for e in split(",", coalesce(var.backbone_keys, "0:")) : try(tonumber(split(":", e)[0]) <= 15, false)]))
    error_message = "backbone_keys must be \"id:base64,id:base64\" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters)."
  }
  validation {
    condition     = var.backbone_keys == null || length(distinct([for e in split(",", coalesce(var.backbone_keys, "0:")) : split(":", e)[0]])) == length(split(",", coalesce(var.backbone_keys, "0:")))
    error_message = "backbone_keys lists a key id more than once."
  }
}

variable "edge_secrets" {
  description = "Further Worker secrets by binding name: API_KEY_HASHES, CLIENT_SECRET_KEY, METRICS_TOKEN (see edge/env.ts). Set TF_VAR_edge_secrets='{}' when there are none; never in a file."
  type        = map(string)
  sensitive   = true
  validation {
    condition     = alltrue([for k in keys(var.edge_secrets) : can(regex("^[A-Z][A-Z0-9_]{0,63}$", k)) && !contains(["GR_CLUSTER_SECRET", "GR_CALL_ID_KEYS", "TOPOLOGY", "TOPOLOGY_JSON", "TOPOLOGY_KV", "TOPOLOGY_KEY", "RATE_LIMITER", "ANALYTICS"], k)])
    error_message = "edge_secrets names must be upper-case letters, digits and '_' (starting with a letter) and must not reuse a binding the module sets itself (GR_CLUSTER_SECRET, GR_CALL_ID_KEYS, TOPOLOGY, TOPOLOGY_JSON, TOPOLOGY_KV, TOPOLOGY_KEY, RATE_LIMITER, ANALYTICS)."
  }
}

variable "as_written" {
  description = <<-EOT
    anycast, edge, images and conference exactly as the operator wrote them (type any: not converted).
    Converting a value to the object types above silently drops an attribute the type does not
    declare, so a misspelt optional attribute (`custom_domian`) would quietly take its default.
    When this is set, such an attribute is an error. The root passes the raw variables.
  EOT
  type = object({
    anycast    = any
    edge       = any
    images     = any
    conference = optional(any)
  })
  default = null
  validation {
    condition = length(concat(
      try([for a in keys(var.as_written.anycast) : a if !contains(keys(var.anycast), a)], []),
      try([for a in keys(var.as_written.edge) : a if !contains(keys(var.edge), a)], []),
      try([for a in keys(var.as_written.edge.rate_limit) : a if !contains(keys(var.edge.rate_limit), a)], []),
      try([for a in keys(var.as_written.images) : a if !contains(keys(var.images), a)], []),
      try([for a in keys(var.as_written.conference) : a if !contains(keys(var.conference), a)], []),
    )) == 0
    error_message = "anycast, edge, images and conference may only set the attributes their types declare (Terraform would drop any other silently, so a misspelt optional attribute would take its default); unknown: ${join(", ", concat(
      try([for a in keys(var.as_written.anycast) : "anycast.${a} (expected one of ${join(", ", keys(var.anycast))})" if !contains(keys(var.anycast), a)], []),
      try([for a in keys(var.as_written.edge) : "edge.${a} (expected one of ${join(", ", keys(var.edge))})" if !contains(keys(var.edge), a)], []),
      try([for a in keys(var.as_written.edge.rate_limit) : "edge.rate_limit.${a} (expected one of ${join(", ", keys(var.edge.rate_limit))})" if !contains(keys(var.edge.rate_limit), a)], []),
      try([for a in keys(var.as_written.images) : "images.${a} (expected one of ${join(", ", keys(var.images))})" if !contains(keys(var.images), a)], []),
      try([for a in keys(var.as_written.conference) : "conference.${a} (expected one of ${join(", ", keys(var.conference))})" if !contains(keys(var.conference), a)], []),
    ))}."
  }
}
