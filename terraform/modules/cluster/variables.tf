variable "cluster_name" {
  description = "Cluster name (its key in clusters)."
  type        = string
}

variable "cluster_id" {
  description = "Cluster id from the topology (CLUSTER_ID)."
  type        = number
}

variable "namespace" {
  description = "Kubernetes namespace created for Global Relay."
  type        = string
}

variable "backbone" {
  description = "The cluster relay's backbone address \"ip:port\"; its LoadBalancer Service gets this IP."
  type        = string
}

variable "signalling_url" {
  description = "The signalling URL the edge calls; its port is the gateway Service port."
  type        = string
}

variable "backend_url" {
  description = "WebSocket URL of the voice backend each transceiver session connects to (BACKEND_URL)."
  type        = string
}

variable "peer_cidrs" {
  description = "Networks allowed to send backbone frames to the cluster relay (every POP's backbone_cidrs)."
  type        = list(string)
}

variable "capacity" {
  description = "Sessions the cluster advertises (CLUSTER_CAPACITY of the gateway)."
  type        = number
}

variable "transceivers_min" {
  description = "Fewest transceiver pods."
  type        = number
}

variable "transceivers_max" {
  description = "Most transceiver pods (the autoscaler's ceiling)."
  type        = number
}

variable "sessions_per_pod" {
  description = "Sessions one transceiver pod (one core) accepts before answering 503."
  type        = number
}

variable "relay_replicas" {
  description = "Cluster relay pods behind the backbone Service."
  type        = number
}

variable "gateway_replicas" {
  description = "Signalling gateway pods behind the signalling Service."
  type        = number
}

variable "service_annotations" {
  description = "Annotations of the two LoadBalancer Services (cloud-specific: static IP, TLS certificate, NLB type)."
  type        = map(string)
}

variable "drain_seconds" {
  description = "How long a transceiver keeps its sessions after SIGTERM (DRAIN_DEADLINE_MS / 1000)."
  type        = number
}

variable "relay_image" {
  description = "Relay container image (regional/Dockerfile.relay)."
  type        = string
}

variable "transceiver_image" {
  description = "Transceiver container image (regional/Dockerfile.transceiver); also runs the gateway."
  type        = string
}

variable "redis_image" {
  description = "Redis image for membership heartbeats and the relay flow mirror."
  type        = string
}

variable "topology_json" {
  description = "The rendered topology JSON."
  type        = string
}

variable "hint_keys" {
  description = "GR_HINT_KEYS."
  type        = string
  sensitive   = true
}

variable "call_id_keys" {
  description = "GR_CALL_ID_KEYS."
  type        = string
  sensitive   = true
}

variable "cluster_secret" {
  description = "GR_CLUSTER_SECRET."
  type        = string
  sensitive   = true
}

variable "conference" {
  description = "Conference settings (modules/settings: port, max_participants, nack, address \"pod\" or \"node\"), or null: no conference socket, port or keyring."
  type = object({
    port             = number
    max_participants = number
    nack             = bool
    address          = string
  })
  default = null
}

variable "conference_peer_cidrs" {
  description = "The other clusters' backbone_cidrs: the only networks the conference port accepts frames from (besides this cluster's transceivers)."
  type        = list(string)
  default     = []
  validation {
    condition     = alltrue([for c in var.conference_peer_cidrs : can(cidrhost(c, 0)) && !endswith(c, "/0")])
    error_message = "Cluster ${var.cluster_name}: conference_peer_cidrs must be CIDRs narrower than /0 (the conference port is never open to the world); got ${join(", ", var.conference_peer_cidrs)}."
  }
}

variable "backbone_keys" {
  description = "GR_BACKBONE_KEYS (required when conference is set)."
  type        = string
  default     = null
  sensitive   = true
}
