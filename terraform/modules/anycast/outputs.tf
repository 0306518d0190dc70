output "listener_arn" {
  description = "ARN of the UDP listener; each POP attaches its endpoint group to it."
  value       = aws_globalaccelerator_listener.udp.id
}

output "tcp_listener_arn" {
  description = "ARN of the ICE-TCP listener (null when vip_tcp_port is null); each POP attaches its TCP endpoint group to it."
  value       = one(aws_globalaccelerator_listener.tcp[*].id)
}

output "ip_addresses" {
  description = "Static anycast addresses of the accelerator."
  value       = flatten(aws_globalaccelerator_accelerator.this.ip_sets[*].ip_addresses)
}

output "dns_name" {
  description = "DNS name of the accelerator."
  value       = aws_globalaccelerator_accelerator.this.dns_name
}
