output "summary" {
  description = "Load balancer, backbone address and relay group of the POP."
  value = {
    pop_id          = var.pop_id
    region          = var.region
    lb_dns_name     = aws_lb.this.dns_name
    backbone        = var.backbone
    autoscaling     = aws_autoscaling_group.relay.name
    traffic_dial    = var.traffic_dial
    hint_keys_param = aws_ssm_parameter.hint_keys.name
    endpoint_group  = aws_globalaccelerator_endpoint_group.this.arn
    # ICE-TCP: null when vip_tcp_port is null.
    vip_tcp_port       = var.vip_tcp_port
    tcp_endpoint_group = one(aws_globalaccelerator_endpoint_group.tcp[*].arn)
  }
}
