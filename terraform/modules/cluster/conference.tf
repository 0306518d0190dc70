# Conferences (docs/operations/conferences.md), only when var.conference is set: every resource
# here counts on it, and main.tf's transceiver additions (the keyring's env_from, the port, the
# environment) are dynamic blocks over the locals below, so with conference null none of it exists
# and the transceiver pods are exactly as before.
#
# Hub and legs exchange conference frames transceiver to transceiver (relays never see them): a
# transceiver advertises TRANSCEIVER_CONFERENCE_ADDR, its pod IP ("pod": pod networks routed
# between clusters) or its node's IP with the port as a hostPort ("node": one transceiver per
# node), and the port accepts frames from the other clusters' backbone_cidrs and this cluster's
# own transceivers only.

locals {
  conference_on = var.conference != null
  # [port] or [], for the dynamic port and env_from blocks.
  conference_ports = local.conference_on ? [var.conference.port] : []
  conference_node  = local.conference_on ? var.conference.address == "node" : false
  # The node's IP, for "node" only (Kubernetes expands $(HOST_IP) from the env var before it).
  conference_host_ip = local.conference_node ? ["status.hostIP"] : []
  conference_env = local.conference_on ? {
    TRANSCEIVER_CONFERENCE_PORT = tostring(var.conference.port)
    TRANSCEIVER_CONFERENCE_ADDR = "$(${local.conference_node ? "HOST_IP" : "POD_IP"}):${var.conference.port}"
    CONFERENCE_MAX_PARTICIPANTS = tostring(var.conference.max_participants)
    CONFERENCE_NACK             = var.conference.nack ? "1" : "0"
  } : {}
  # A rotated backbone keyring rolls the transceivers only (nothing else reads it).
  conference_annotations = local.conference_on ? { "global-relay/backbone-keys-sha256" = nonsensitive(sha256(coalesce(var.backbone_keys, "-"))) } : {}
  # The networks the NetworkPolicy admits on the conference port, as ipBlocks.
  conference_ingress_cidrs = local.conference_on ? var.conference_peer_cidrs : []
}

# The keyring in its own Secret: only the transceivers mount it (env_from), not the gateway or relay.
resource "kubernetes_secret_v1" "backbone_keys" {
  count = local.conference_on ? 1 : 0

  metadata {
    name      = "global-relay-backbone-keys"
    namespace = local.ns
    labels    = local.common
  }
  data = {
    GR_BACKBONE_KEYS = var.backbone_keys
  }

  lifecycle {
    precondition {
      condition     = var.backbone_keys != null
      error_message = "Cluster ${var.cluster_name} has conference set but no backbone_keys: set TF_VAR_backbone_keys (GR_BACKBONE_KEYS, the same on every cluster)."
    }
  }
}

# The conference port, UDP, from the other clusters' backbone networks and this cluster's
# transceivers (a leg and its hub may be siblings). NetworkPolicies add up: the transceiver's
# other policy (relay and gateway) is unchanged.
resource "kubernetes_network_policy_v1" "conference" {
  count = local.conference_on ? 1 : 0

  metadata {
    name      = "transceiver-conference-from-backbone"
    namespace = local.ns
  }
  spec {
    pod_selector {
      match_labels = local.selector.transceiver
    }
    policy_types = ["Ingress"]
    ingress {
      dynamic "from" {
        for_each = local.conference_ingress_cidrs
        content {
          ip_block {
            cidr = from.value
          }
        }
      }
      from {
        pod_selector {
          match_labels = local.selector.transceiver
        }
      }
      ports {
        port     = tostring(var.conference.port)
        protocol = "UDP"
      }
    }
  }
}
