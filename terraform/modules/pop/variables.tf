variable "name_prefix" {
  description = "Prefix of resource names."
  type        = string
}

variable "pop_name" {
  description = "POP name (its key in pops)."
  type        = string
}

variable "pop_id" {
  description = "POP id from the topology (POP_ID of the relay)."
  type        = number
}

variable "region" {
  description = "AWS region of the POP; every resource here is created in it."
  type        = string
}

variable "listener_arn" {
  description = "The anycast accelerator's UDP listener (modules/anycast)."
  type        = string
}

variable "global_vip_port" {
  description = "Port of the global VIP (the listener port)."
  type        = number
}

variable "vip_port" {
  description = "UDP port the relay serves clients on (the POP vip's port)."
  type        = number
}

variable "backbone" {
  description = "The POP's backbone address \"ip:port\": an Elastic IP of this region, bound to the load balancer."
  type        = string
}

variable "peer_cidrs" {
  description = "Networks allowed to send backbone frames to this POP (every cluster's backbone_cidrs)."
  type        = list(string)
}

variable "vpc_id" {
  description = "VPC of the POP."
  type        = string
}

variable "public_subnet_ids" {
  description = "Public subnets of the load balancer; the first one carries the backbone Elastic IP."
  type        = list(string)
}

variable "private_subnet_ids" {
  description = "Private subnets of the relay instances (egress through NAT addresses listed in the POP's backbone_cidrs)."
  type        = list(string)
}

variable "instance_type" {
  description = "EC2 instance type of the relays (x86_64)."
  type        = string
}

variable "min_size" {
  description = "Fewest relay instances."
  type        = number
}

variable "max_size" {
  description = "Most relay instances."
  type        = number
}

variable "traffic_dial" {
  description = "Share of the accelerator's traffic for this region, 0-100; 0 drains the POP."
  type        = number
}

variable "redis_url" {
  description = "Optional Redis for the relays' flow mirror (null: flows live in memory only)."
  type        = string
}

variable "relay_image" {
  description = "Relay container image (regional/Dockerfile.relay)."
  type        = string
}

variable "topology_json" {
  description = "The rendered topology JSON."
  type        = string
}

variable "hint_keys" {
  description = "GR_HINT_KEYS, stored as an SSM SecureString the relays read at boot."
  type        = string
  sensitive   = true
}
