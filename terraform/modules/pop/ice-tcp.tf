# ICE-TCP (RFC 6544) at this POP, only when vip_tcp_port is set: every resource here counts on it,
# so with vip_tcp_port null none of them exists. The ingress rule that opens the port is in
# main.tf (a dynamic block of the load balancer's security group, on local.tcp_ports), and the
# relay group registers with the target group there (a splat: nothing when there is none).

# ICE-TCP connections, passed through (TCP, not TLS) with the client's address preserved: the relay
# keys each connection and its per-source cap by the real remote address. Health stays on the admin
# /readyz: a probe of the TCP port itself would open a connection that never sends a Binding
# request and be counted as a first_packet_timeout. Idle timeout: the NLB's TCP default (350 s),
# far above the consent checks that keep a call's connection busy.
resource "aws_lb_target_group" "vip_tcp" {
  count = var.vip_tcp_port == null ? 0 : 1

  region               = var.region
  name                 = substr("${local.name}-tcp", 0, 32)
  port                 = var.vip_tcp_port
  protocol             = "TCP"
  target_type          = "instance"
  vpc_id               = var.vpc_id
  preserve_client_ip   = true
  deregistration_delay = local.drain_seconds

  health_check {
    protocol = "HTTP"
    port     = tostring(local.admin_port)
    path     = "/readyz"
  }
}

resource "aws_lb_listener" "vip_tcp" {
  count = var.vip_tcp_port == null ? 0 : 1

  region            = var.region
  load_balancer_arn = aws_lb.this.arn
  protocol          = "TCP"
  port              = var.vip_tcp_port

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.vip_tcp[0].arn
  }
}

# The same load balancer behind the accelerator's TCP listener: one endpoint group per listener
# and region.
resource "aws_globalaccelerator_endpoint_group" "tcp" {
  count = var.vip_tcp_port == null ? 0 : 1

  listener_arn            = var.tcp_listener_arn
  endpoint_group_region   = var.region
  traffic_dial_percentage = var.traffic_dial

  dynamic "port_override" {
    for_each = var.vip_tcp_port == var.global_vip_tcp_port ? [] : [var.vip_tcp_port]
    content {
      listener_port = var.global_vip_tcp_port
      endpoint_port = port_override.value
    }
  }

  endpoint_configuration {
    endpoint_id                    = aws_lb.this.arn
    weight                         = 100
    client_ip_preservation_enabled = true
  }

  # The root passes modules/anycast's TCP listener, made from the same port; a port without one
  # would otherwise fail inside the provider with a message that names neither.
  lifecycle {
    precondition {
      condition     = var.tcp_listener_arn != null
      error_message = "POP ${var.pop_name} has vip_tcp_port ${var.vip_tcp_port} but no tcp_listener_arn: the accelerator needs its TCP listener (modules/anycast vip_tcp_port) first."
    }
  }
}
