# One Global Relay POP in one AWS region: an endpoint group of the anycast accelerator, a UDP
# network load balancer (client VIP port, and the backbone port on a fixed Elastic IP), and an
# autoscaling group of relay instances. With ICE-TCP on (vip_tcp_port set), also a TCP listener
# and target group on the load balancer and an endpoint group on the accelerator's TCP listener
# (ice-tcp.tf); with vip_tcp_port null none of that exists. Security: only the VIP ports are open
# to the world; the backbone port accepts only the clusters' backbone networks; instances accept
# only the load balancer. Every resource sets `region` (AWS provider 6), so no per-region
# provider is needed.

locals {
  name           = "${var.name_prefix}-pop-${var.pop_name}"
  backbone_host  = trim(replace(var.backbone, "/:[0-9]+$/", ""), "[]")
  backbone_port  = tonumber(regex("[0-9]+$", var.backbone))
  admin_port     = 9100
  drain_seconds  = 120
  peer_cidrs_v4  = [for c in var.peer_cidrs : c if !strcontains(c, ":")]
  peer_cidrs_v6  = [for c in var.peer_cidrs : c if strcontains(c, ":")]
  hint_key_param = "/${var.name_prefix}/pop/${var.pop_name}/hint-keys"
  # [] or [the port]: the for_each of the TCP ingress rule (count elsewhere).
  tcp_ports = var.vip_tcp_port == null ? [] : [var.vip_tcp_port]
}

data "aws_ssm_parameter" "ami" {
  region = var.region
  name   = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
}

data "aws_eip" "backbone" {
  region    = var.region
  public_ip = local.backbone_host
}

data "aws_vpc" "this" {
  region = var.region
  id     = var.vpc_id
}

# ---- secrets ----

resource "aws_ssm_parameter" "hint_keys" {
  region = var.region
  name   = local.hint_key_param
  type   = "SecureString"
  value  = var.hint_keys
}

# ---- security ----

resource "aws_security_group" "nlb" {
  region      = var.region
  name        = "${local.name}-nlb"
  description = "Global Relay POP ${var.pop_name}: public VIP ports, backbone from known peers only"
  vpc_id      = var.vpc_id

  ingress {
    description      = "Clients (STUN, DTLS, SRTP) through the accelerator, client IP preserved"
    protocol         = "udp"
    from_port        = var.vip_port
    to_port          = var.vip_port
    cidr_blocks      = ["0.0.0.0/0"]
    ipv6_cidr_blocks = ["::/0"]
  }

  # ICE-TCP: that one port, plain TCP (the NLB passes the stream through, no TLS termination).
  dynamic "ingress" {
    for_each = local.tcp_ports
    content {
      description      = "ICE-TCP clients (RFC 4571 framed STUN, DTLS, SRTP) through the accelerator, client IP preserved"
      protocol         = "tcp"
      from_port        = ingress.value
      to_port          = ingress.value
      cidr_blocks      = ["0.0.0.0/0"]
      ipv6_cidr_blocks = ["::/0"]
    }
  }

  ingress {
    description      = "Backbone frames from cluster relays and transceivers"
    protocol         = "udp"
    from_port        = local.backbone_port
    to_port          = local.backbone_port
    cidr_blocks      = local.peer_cidrs_v4
    ipv6_cidr_blocks = local.peer_cidrs_v6
  }

  egress {
    description = "To the relay instances"
    protocol    = "-1"
    from_port   = 0
    to_port     = 0
    cidr_blocks = [data.aws_vpc.this.cidr_block]
  }
}

resource "aws_security_group" "relay" {
  region      = var.region
  name        = "${local.name}-relay"
  description = "Global Relay POP ${var.pop_name}: relay instances, reachable from the load balancer only"
  vpc_id      = var.vpc_id

  ingress {
    description     = "Client and backbone datagrams, and health checks, from the load balancer"
    protocol        = "-1"
    from_port       = 0
    to_port         = 0
    security_groups = [aws_security_group.nlb.id]
  }

  egress {
    description      = "Backbone to clusters, replies to clients, image pulls, SSM"
    protocol         = "-1"
    from_port        = 0
    to_port          = 0
    cidr_blocks      = ["0.0.0.0/0"]
    ipv6_cidr_blocks = ["::/0"]
  }
}

# ---- load balancer ----

resource "aws_lb" "this" {
  region                           = var.region
  name                             = substr(local.name, 0, 32)
  load_balancer_type               = "network"
  internal                         = false
  security_groups                  = [aws_security_group.nlb.id]
  enable_cross_zone_load_balancing = true

  # The first public subnet carries the backbone Elastic IP: cluster relays send to it.
  dynamic "subnet_mapping" {
    for_each = var.public_subnet_ids
    content {
      subnet_id     = subnet_mapping.value
      allocation_id = subnet_mapping.key == 0 ? data.aws_eip.backbone.id : null
    }
  }
}

resource "aws_lb_target_group" "vip" {
  region               = var.region
  name                 = substr("${local.name}-vip", 0, 32)
  port                 = var.vip_port
  protocol             = "UDP"
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

resource "aws_lb_target_group" "backbone" {
  region               = var.region
  name                 = substr("${local.name}-bb", 0, 32)
  port                 = local.backbone_port
  protocol             = "UDP"
  target_type          = "instance"
  vpc_id               = var.vpc_id
  preserve_client_ip   = true
  deregistration_delay = local.drain_seconds

  health_check {
    protocol = "HTTP"
    port     = tostring(local.admin_port)
    path     = "/healthz"
  }
}

resource "aws_lb_listener" "vip" {
  region            = var.region
  load_balancer_arn = aws_lb.this.arn
  protocol          = "UDP"
  port              = var.vip_port

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.vip.arn
  }
}

resource "aws_lb_listener" "backbone" {
  region            = var.region
  load_balancer_arn = aws_lb.this.arn
  protocol          = "UDP"
  port              = local.backbone_port

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.backbone.arn
  }
}

# ---- relay instances ----

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "relay" {
  statement {
    actions   = ["ssm:GetParameter"]
    resources = [aws_ssm_parameter.hint_keys.arn]
  }
}

resource "aws_iam_role" "relay" {
  name               = "${local.name}-relay"
  assume_role_policy = data.aws_iam_policy_document.assume.json
}

resource "aws_iam_role_policy" "relay" {
  name   = "read-hint-keys"
  role   = aws_iam_role.relay.id
  policy = data.aws_iam_policy_document.relay.json
}

resource "aws_iam_role_policy_attachment" "ssm_core" {
  role       = aws_iam_role.relay.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

resource "aws_iam_instance_profile" "relay" {
  name = "${local.name}-relay"
  role = aws_iam_role.relay.name
}

resource "aws_launch_template" "relay" {
  region                 = var.region
  name_prefix            = "${local.name}-"
  image_id               = data.aws_ssm_parameter.ami.value
  instance_type          = var.instance_type
  vpc_security_group_ids = [aws_security_group.relay.id]
  update_default_version = true

  iam_instance_profile {
    arn = aws_iam_instance_profile.relay.arn
  }

  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  # A changed topology or image changes the user data, which rolls the group (instance_refresh).
  user_data = base64encode(templatefile("${path.module}/user-data.sh.tftpl", {
    region         = var.region
    image          = var.relay_image
    pop_id         = var.pop_id
    vip_port       = var.vip_port
    backbone_port  = local.backbone_port
    admin_port     = local.admin_port
    drain_seconds  = local.drain_seconds
    redis_url      = var.redis_url == null ? "" : var.redis_url
    topology_json  = var.topology_json
    hint_key_param = local.hint_key_param
    # A rotated keyring changes the user data, so the group refreshes and relays re-read SSM.
    keys_sha256 = nonsensitive(sha256(var.hint_keys))
  }))

  tag_specifications {
    resource_type = "instance"
    tags = {
      Name                 = local.name
      "global-relay:pop"   = var.pop_name
      "global-relay:popId" = tostring(var.pop_id)
    }
  }
}

resource "aws_autoscaling_group" "relay" {
  region                    = var.region
  name                      = "${local.name}-relay"
  min_size                  = var.min_size
  max_size                  = var.max_size
  vpc_zone_identifier       = var.private_subnet_ids
  target_group_arns         = concat([aws_lb_target_group.vip.arn, aws_lb_target_group.backbone.arn], aws_lb_target_group.vip_tcp[*].arn)
  health_check_type         = "ELB"
  health_check_grace_period = 60

  launch_template {
    id      = aws_launch_template.relay.id
    version = aws_launch_template.relay.latest_version
  }

  # Replace instances a few at a time; each one drains on SIGTERM (docker stop timeout) while the
  # target group's deregistration delay keeps its flows flowing. Restored flows come from Redis.
  instance_refresh {
    strategy = "Rolling"
    preferences {
      min_healthy_percentage = 50
      instance_warmup        = 60
    }
  }

  tag {
    key                 = "Name"
    value               = "${local.name}-relay"
    propagate_at_launch = true
  }
}

# ---- anycast endpoint ----

resource "aws_globalaccelerator_endpoint_group" "this" {
  listener_arn            = var.listener_arn
  endpoint_group_region   = var.region
  traffic_dial_percentage = var.traffic_dial

  dynamic "port_override" {
    for_each = var.vip_port == var.global_vip_port ? [] : [var.vip_port]
    content {
      listener_port = var.global_vip_port
      endpoint_port = port_override.value
    }
  }

  endpoint_configuration {
    endpoint_id                    = aws_lb.this.arn
    weight                         = 100
    client_ip_preservation_enabled = true
  }
}
