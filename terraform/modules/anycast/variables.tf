variable "name" {
  description = "Name of the accelerator."
  type        = string
}

variable "vip_host" {
  description = "The Global Relay VIP address (host part of global_vip)."
  type        = string
}

variable "vip_port" {
  description = "UDP port of the Global Relay VIP (the UDP listener's port)."
  type        = number
}

variable "vip_tcp_port" {
  description = "TCP port of ICE-TCP on the VIP (topology globalVipTcpPort), or null: no TCP listener."
  type        = number
  validation {
    condition     = var.vip_tcp_port == null || try(var.vip_tcp_port == floor(var.vip_tcp_port) && var.vip_tcp_port >= 1 && var.vip_tcp_port <= 65535, false)
    error_message = "anycast vip_tcp_port must be null or a whole port number from 1 to 65535; got ${coalesce(var.vip_tcp_port, 0)}."
  }
}

variable "byoip" {
  description = "Bind vip_host itself (a bring-your-own-IP address provisioned to Global Accelerator) instead of AWS-assigned addresses."
  type        = bool
}

variable "client_affinity" {
  description = "NONE or SOURCE_IP: SOURCE_IP keeps every flow of one client address on one endpoint."
  type        = string
}
