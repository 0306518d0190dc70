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

variable "tcp_listener_arn" {
  description = "The anycast accelerator's ICE-TCP listener (modules/anycast), or null when vip_tcp_port is null."
  type        = string
}

variable "global_vip_tcp_port" {
  description = "ICE-TCP port of the global VIP (the TCP listener port, topology globalVipTcpPort), or null for no ICE-TCP."
  type        = number
  validation {
    condition     = var.global_vip_tcp_port == null || try(var.global_vip_tcp_port == floor(var.global_vip_tcp_port) && var.global_vip_tcp_port >= 1 && var.global_vip_tcp_port <= 65535, false)
    error_message = "POP ${var.pop_name}: global_vip_tcp_port must be null or a whole port number from 1 to 65535; got ${coalesce(var.global_vip_tcp_port, 0)}."
  }
}

variable "vip_tcp_port" {
  description = "TCP port the relay serves ICE-TCP clients on (the POP's pops[].vipTcpPort), or null: no TCP ingress, target group, listener or endpoint group."
  type        = number
  validation {
    condition     = var.vip_tcp_port == null || try(var.vip_tcp_port == floor(var.vip_tcp_port) && var.vip_tcp_port >= 1 && var.vip_tcp_port <= 65535, false)
    error_message = "POP ${var.pop_name}: vip_tcp_port must be null or a whole port number from 1 to 65535; got ${coalesce(var.vip_tcp_port, 0)}."
  }
  validation {
    condition     = (var.vip_tcp_port == null) == (var.global_vip_tcp_port == null)
    error_message = "POP ${var.pop_name}: vip_tcp_port and global_vip_tcp_port must both be set (ICE-TCP on) or both null; got ${coalesce(var.vip_tcp_port, "null")} and ${coalesce(var.global_vip_tcp_port, "null")}."
  }
  # One NLB cannot have a UDP and a TCP listener on the same port (that takes one TCP_UDP listener
  # and TCP_UDP target groups, which this module does not build).
  validation {
    condition     = var.vip_tcp_port == null || try(var.vip_tcp_port != var.vip_port && var.vip_tcp_port != tonumber(regex("[0-9]+$", var.backbone)), false)
    error_message = "POP ${var.pop_name}: vip_tcp_port (${coalesce(var.vip_tcp_port, 0)}) must differ from the UDP ports of its load balancer, the VIP port (${var.vip_port}) and the backbone port (${var.backbone}): a network load balancer takes a TCP and a UDP listener on one port only as a single TCP_UDP listener."
  }
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
