# The anycast ingress: one accelerator, one UDP listener on the VIP port and, when ICE-TCP is on
# (vip_tcp_port), one TCP listener on that port. Each POP (modules/pop) adds its own endpoint
# group to each listener in its region, so a new POP needs nothing here.

resource "aws_globalaccelerator_accelerator" "this" {
  name            = var.name
  ip_address_type = "IPV4"
  ip_addresses    = var.byoip ? [var.vip_host] : null
  enabled         = true
}

resource "aws_globalaccelerator_listener" "udp" {
  accelerator_arn = aws_globalaccelerator_accelerator.this.arn
  protocol        = "UDP"
  client_affinity = var.client_affinity

  port_range {
    from_port = var.vip_port
    to_port   = var.vip_port
  }
}

# ICE-TCP (RFC 6544) for callers whose networks drop UDP: plain TCP, no TLS termination anywhere
# (the stream carries RFC 4571 frames of STUN and DTLS). The same client affinity as UDP.
resource "aws_globalaccelerator_listener" "tcp" {
  count = var.vip_tcp_port == null ? 0 : 1

  accelerator_arn = aws_globalaccelerator_accelerator.this.arn
  protocol        = "TCP"
  client_affinity = var.client_affinity

  port_range {
    from_port = var.vip_tcp_port
    to_port   = var.vip_tcp_port
  }
}

# Every SDP answer advertises global_vip: an accelerator that does not own it would black-hole
# every call. A check (not a precondition) so the first apply without BYOIP can complete and tell
# the operator which address to put in global_vip.
check "global_vip_is_an_accelerator_address" {
  assert {
    condition     = contains(flatten(aws_globalaccelerator_accelerator.this.ip_sets[*].ip_addresses), var.vip_host)
    error_message = "global_vip (${var.vip_host}) is not an address of the accelerator (${join(", ", flatten(aws_globalaccelerator_accelerator.this.ip_sets[*].ip_addresses))}): set global_vip to one of them (or provision it with BYOIP) and apply again before sending traffic."
  }
}
