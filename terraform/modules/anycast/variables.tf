variable "name" {
  description = "Name of the accelerator."
  type        = string
}

variable "vip_host" {
  description = "The Global Relay VIP address (host part of global_vip)."
  type        = string
}

variable "vip_port" {
  description = "UDP port of the Global Relay VIP (the listener's only port)."
  type        = number
}

variable "byoip" {
  description = "Bind vip_host itself (a bring-your-own-IP address provisioned to Global Accelerator) instead of AWS-assigned addresses."
  type        = bool
}

variable "client_affinity" {
  description = "NONE or SOURCE_IP: SOURCE_IP keeps every flow of one client address on one endpoint."
  type        = string
}
