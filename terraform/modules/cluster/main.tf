# One regional cluster on an existing Kubernetes cluster: Redis (soft state: heartbeats and the
# relay flow mirror), transceivers (one pod = one process = one UDP port, stable id from the
# StatefulSet ordinal), the signalling gateway the edge calls, and the cluster relay on the backbone.
#
# Draining: Kubernetes runs preStop (a short sleep while the pod leaves Service endpoints), then
# sends SIGTERM. Every program drains on SIGTERM (no new sessions or flows, /healthz says
# "draining", existing sessions continue) for up to DRAIN_DEADLINE_MS, then exits. The grace period
# covers preStop + drain + margin, so Kubernetes never SIGKILLs a draining transceiver early.

locals {
  ns             = kubernetes_namespace_v1.this.metadata[0].name
  backbone_host  = trim(replace(var.backbone, "/:[0-9]+$/", ""), "[]")
  backbone_port  = tonumber(regex("[0-9]+$", var.backbone))
  signal_port    = try(tonumber(regex("^https?://[^/]+:([0-9]+)", var.signalling_url)[0]), startswith(var.signalling_url, "https:") ? 443 : 80)
  transceiver_ud = 3479
  http_port      = 8080
  admin_port     = 9100
  pre_stop       = 5
  redis_url      = "redis://redis.${kubernetes_namespace_v1.this.metadata[0].name}.svc:6379"

  common = {
    "app.kubernetes.io/part-of"    = "global-relay"
    "app.kubernetes.io/managed-by" = "terraform"
    "global-relay/cluster"         = var.cluster_name
  }
  labels = {
    redis       = merge(local.common, { "app.kubernetes.io/name" = "redis" })
    transceiver = merge(local.common, { "app.kubernetes.io/name" = "transceiver" })
    gateway     = merge(local.common, { "app.kubernetes.io/name" = "gateway" })
    relay       = merge(local.common, { "app.kubernetes.io/name" = "relay" })
  }
  selector = { for k, v in local.labels : k => { "app.kubernetes.io/name" = v["app.kubernetes.io/name"], "global-relay/cluster" = var.cluster_name } }

  # Pods read the keys at start: a rotated keyring rolls every pod that uses it (a digest of
  # 256-bit random keys reveals nothing about them).
  keys_sha256 = nonsensitive(sha256("${var.hint_keys}\n${var.call_id_keys}\n${var.cluster_secret}"))

  # Environment shared by every Global Relay container of this cluster (names as read by
  # regional/transceiver/config.ts; the relay and gateway follow the same convention).
  base_env = {
    CLUSTER_ID    = tostring(var.cluster_id)
    TOPOLOGY_FILE = "/etc/global-relay/topology.json"
    REDIS_URL     = local.redis_url
  }
}

resource "kubernetes_namespace_v1" "this" {
  metadata {
    name   = var.namespace
    labels = local.common
  }
}

resource "kubernetes_secret_v1" "keys" {
  metadata {
    name      = "global-relay-keys"
    namespace = local.ns
    labels    = local.common
  }
  data = {
    GR_HINT_KEYS      = var.hint_keys
    GR_CALL_ID_KEYS   = var.call_id_keys
    GR_CLUSTER_SECRET = var.cluster_secret
  }
}

resource "kubernetes_config_map_v1" "topology" {
  metadata {
    name      = "global-relay-topology"
    namespace = local.ns
    labels    = local.common
  }
  data = {
    "topology.json" = var.topology_json
  }
}

# ---------------------------------------------------------------- Redis

resource "kubernetes_deployment_v1" "redis" {
  metadata {
    name      = "redis"
    namespace = local.ns
    labels    = local.labels.redis
  }
  spec {
    replicas = 1
    selector {
      match_labels = local.selector.redis
    }
    strategy {
      type = "Recreate"
    }
    template {
      metadata {
        labels = local.labels.redis
      }
      spec {
        security_context {
          run_as_non_root = true
          run_as_user     = 999
        }
        container {
          name  = "redis"
          image = var.redis_image
          # Soft state only: heartbeats expire in seconds and flows are re-learned from STUN.
          args = ["--save", "", "--appendonly", "no", "--maxmemory", "256mb", "--maxmemory-policy", "volatile-ttl"]
          port {
            name           = "redis"
            container_port = 6379
          }
          readiness_probe {
            tcp_socket {
              port = "redis"
            }
            period_seconds = 5
          }
          resources {
            requests = { cpu = "250m", memory = "320Mi" }
            limits   = { memory = "384Mi" }
          }
          security_context {
            allow_privilege_escalation = false
            read_only_root_filesystem  = true
            capabilities {
              drop = ["ALL"]
            }
          }
          volume_mount {
            name       = "data"
            mount_path = "/data"
          }
        }
        volume {
          name = "data"
          empty_dir {}
        }
      }
    }
  }
}

resource "kubernetes_service_v1" "redis" {
  metadata {
    name      = "redis"
    namespace = local.ns
    labels    = local.labels.redis
  }
  spec {
    selector = local.selector.redis
    port {
      name        = "redis"
      port        = 6379
      target_port = "redis"
    }
  }
}

resource "kubernetes_network_policy_v1" "redis" {
  metadata {
    name      = "redis-from-global-relay"
    namespace = local.ns
  }
  spec {
    pod_selector {
      match_labels = local.selector.redis
    }
    policy_types = ["Ingress"]
    ingress {
      from {
        pod_selector {
          match_labels = { "app.kubernetes.io/part-of" = "global-relay" }
        }
      }
      ports {
        port     = "6379"
        protocol = "TCP"
      }
    }
  }
}

# ---------------------------------------------------------------- transceivers

resource "kubernetes_service_v1" "transceiver" {
  metadata {
    name      = "transceiver"
    namespace = local.ns
    labels    = local.labels.transceiver
  }
  spec {
    cluster_ip                  = "None"
    publish_not_ready_addresses = true
    selector                    = local.selector.transceiver
    port {
      name     = "backbone"
      protocol = "UDP"
      port     = local.transceiver_ud
    }
    port {
      name     = "http"
      protocol = "TCP"
      port     = local.http_port
    }
  }
}

resource "kubernetes_stateful_set_v1" "transceiver" {
  metadata {
    name      = "transceiver"
    namespace = local.ns
    labels    = local.labels.transceiver
  }
  spec {
    service_name          = kubernetes_service_v1.transceiver.metadata[0].name
    replicas              = var.transceivers_min
    pod_management_policy = "Parallel"
    selector {
      match_labels = local.selector.transceiver
    }
    update_strategy {
      type = "RollingUpdate"
    }
    template {
      metadata {
        labels      = local.labels.transceiver
        annotations = merge({ "global-relay/keys-sha256" = local.keys_sha256 }, local.conference_annotations)
      }
      spec {
        termination_grace_period_seconds = local.pre_stop + var.drain_seconds + 15
        security_context {
          run_as_non_root = true
          run_as_user     = 1000
          run_as_group    = 1000
        }
        container {
          name  = "transceiver"
          image = var.transceiver_image
          # Stable transceiver id = StatefulSet ordinal + 1 (ids start at 1; the hint carries it).
          # `$$` is Kubernetes' escape for a literal `$`.
          command = ["/bin/sh", "-c", "export TRANSCEIVER_ID=$$((POD_INDEX + 1)); exec node regional/transceiver/main.ts"]
          env {
            name = "POD_INDEX"
            value_from {
              field_ref {
                field_path = "metadata.labels['apps.kubernetes.io/pod-index']"
              }
            }
          }
          env {
            name = "POD_IP"
            value_from {
              field_ref {
                field_path = "status.podIP"
              }
            }
          }
          # Conferences advertised on the node's address (conference.address = "node").
          dynamic "env" {
            for_each = local.conference_host_ip
            content {
              name = "HOST_IP"
              value_from {
                field_ref {
                  field_path = env.value
                }
              }
            }
          }
          dynamic "env" {
            for_each = merge(local.base_env, {
              TRANSCEIVER_UDP            = "0.0.0.0:${local.transceiver_ud}"
              TRANSCEIVER_UDP_ADVERTISE  = "$(POD_IP):${local.transceiver_ud}"
              TRANSCEIVER_HTTP           = "0.0.0.0:${local.http_port}"
              TRANSCEIVER_HTTP_ADVERTISE = "http://$(POD_IP):${local.http_port}"
              TRANSCEIVER_CAPACITY       = tostring(var.sessions_per_pod)
              DRAIN_DEADLINE_MS          = tostring(var.drain_seconds * 1000)
              BACKEND_URL                = var.backend_url
            }, local.conference_env)
            content {
              name  = env.key
              value = env.value
            }
          }
          env_from {
            secret_ref {
              name = kubernetes_secret_v1.keys.metadata[0].name
            }
          }
          # GR_BACKBONE_KEYS, with conferences only (conference.tf).
          dynamic "env_from" {
            for_each = kubernetes_secret_v1.backbone_keys[*].metadata[0].name
            content {
              secret_ref {
                name = env_from.value
              }
            }
          }
          port {
            name           = "backbone"
            container_port = local.transceiver_ud
            protocol       = "UDP"
          }
          port {
            name           = "http"
            container_port = local.http_port
            protocol       = "TCP"
          }
          # The conference socket; on the node's address too with conference.address = "node".
          dynamic "port" {
            for_each = local.conference_ports
            content {
              name           = "conference"
              container_port = port.value
              host_port      = local.conference_node ? port.value : null
              protocol       = "UDP"
            }
          }
          readiness_probe {
            http_get {
              path = "/readyz"
              port = "http"
            }
            period_seconds = 5
          }
          liveness_probe {
            http_get {
              path = "/healthz"
              port = "http"
            }
            period_seconds    = 10
            failure_threshold = 6
          }
          lifecycle {
            pre_stop {
              exec {
                command = ["/bin/sh", "-c", "sleep ${local.pre_stop}"]
              }
            }
          }
          resources {
            requests = { cpu = "1", memory = "512Mi" }
            limits   = { memory = "1Gi" }
          }
          security_context {
            allow_privilege_escalation = false
            read_only_root_filesystem  = true
            capabilities {
              drop = ["ALL"]
            }
          }
          volume_mount {
            name       = "topology"
            mount_path = "/etc/global-relay"
            read_only  = true
          }
        }
        volume {
          name = "topology"
          config_map {
            name = kubernetes_config_map_v1.topology.metadata[0].name
          }
        }
      }
    }
  }
  # The autoscaler owns the replica count once created.
  lifecycle {
    ignore_changes = [spec[0].replicas]
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "transceiver" {
  metadata {
    name      = "transceiver"
    namespace = local.ns
  }
  spec {
    min_replicas = var.transceivers_min
    max_replicas = var.transceivers_max
    scale_target_ref {
      api_version = "apps/v1"
      kind        = "StatefulSet"
      name        = kubernetes_stateful_set_v1.transceiver.metadata[0].name
    }
    metric {
      type = "Resource"
      resource {
        name = "cpu"
        target {
          type                = "Utilization"
          average_utilization = 60
        }
      }
    }
    behavior {
      # Scaling down drains a pod for up to drain_seconds: one pod at a time, slowly.
      scale_down {
        stabilization_window_seconds = 600
        select_policy                = "Min"
        policy {
          type           = "Pods"
          value          = 1
          period_seconds = max(60, min(1800, var.drain_seconds))
        }
      }
      scale_up {
        stabilization_window_seconds = 0
        select_policy                = "Max"
        policy {
          type           = "Percent"
          value          = 100
          period_seconds = 60
        }
      }
    }
  }
}

resource "kubernetes_pod_disruption_budget_v1" "transceiver" {
  metadata {
    name      = "transceiver"
    namespace = local.ns
  }
  spec {
    max_unavailable = "1"
    selector {
      match_labels = local.selector.transceiver
    }
  }
}

resource "kubernetes_network_policy_v1" "transceiver" {
  metadata {
    name      = "transceiver-from-relay-and-gateway"
    namespace = local.ns
  }
  spec {
    pod_selector {
      match_labels = local.selector.transceiver
    }
    policy_types = ["Ingress"]
    ingress {
      from {
        pod_selector {
          match_labels = local.selector.relay
        }
      }
      ports {
        port     = tostring(local.transceiver_ud)
        protocol = "UDP"
      }
    }
    ingress {
      from {
        pod_selector {
          match_labels = local.selector.gateway
        }
      }
      ports {
        port     = tostring(local.http_port)
        protocol = "TCP"
      }
    }
  }
}

# ---------------------------------------------------------------- signalling gateway

resource "kubernetes_deployment_v1" "gateway" {
  metadata {
    name      = "gateway"
    namespace = local.ns
    labels    = local.labels.gateway
  }
  spec {
    replicas = var.gateway_replicas
    selector {
      match_labels = local.selector.gateway
    }
    strategy {
      type = "RollingUpdate"
      rolling_update {
        max_unavailable = "0"
        max_surge       = "1"
      }
    }
    template {
      metadata {
        labels      = local.labels.gateway
        annotations = { "global-relay/keys-sha256" = local.keys_sha256 }
      }
      spec {
        termination_grace_period_seconds = local.pre_stop + 30
        security_context {
          run_as_non_root = true
          run_as_user     = 1000
          run_as_group    = 1000
        }
        container {
          name    = "gateway"
          image   = var.transceiver_image
          command = ["node", "regional/gateway/main.ts"]
          dynamic "env" {
            for_each = merge(local.base_env, {
              GATEWAY_HTTP     = "0.0.0.0:${local.http_port}"
              CLUSTER_CAPACITY = tostring(var.capacity)
            })
            content {
              name  = env.key
              value = env.value
            }
          }
          env_from {
            secret_ref {
              name = kubernetes_secret_v1.keys.metadata[0].name
            }
          }
          port {
            name           = "http"
            container_port = local.http_port
          }
          readiness_probe {
            http_get {
              path = "/readyz"
              port = "http"
            }
            period_seconds = 5
          }
          liveness_probe {
            http_get {
              path = "/healthz"
              port = "http"
            }
            period_seconds = 10
          }
          lifecycle {
            pre_stop {
              exec {
                command = ["/bin/sh", "-c", "sleep ${local.pre_stop}"]
              }
            }
          }
          resources {
            requests = { cpu = "250m", memory = "256Mi" }
            limits   = { memory = "512Mi" }
          }
          security_context {
            allow_privilege_escalation = false
            read_only_root_filesystem  = true
            capabilities {
              drop = ["ALL"]
            }
          }
          volume_mount {
            name       = "topology"
            mount_path = "/etc/global-relay"
            read_only  = true
          }
        }
        volume {
          name = "topology"
          config_map {
            name = kubernetes_config_map_v1.topology.metadata[0].name
          }
        }
      }
    }
  }
}

resource "kubernetes_service_v1" "gateway" {
  metadata {
    name        = "signalling"
    namespace   = local.ns
    labels      = local.labels.gateway
    annotations = var.service_annotations
  }
  spec {
    type     = "LoadBalancer"
    selector = local.selector.gateway
    port {
      name        = "signalling"
      protocol    = "TCP"
      port        = local.signal_port
      target_port = "http"
    }
  }
}

resource "kubernetes_pod_disruption_budget_v1" "gateway" {
  metadata {
    name      = "gateway"
    namespace = local.ns
  }
  spec {
    min_available = "1"
    selector {
      match_labels = local.selector.gateway
    }
  }
}

# ---------------------------------------------------------------- cluster relay

resource "kubernetes_deployment_v1" "relay" {
  metadata {
    name      = "relay"
    namespace = local.ns
    labels    = local.labels.relay
  }
  spec {
    replicas = var.relay_replicas
    selector {
      match_labels = local.selector.relay
    }
    strategy {
      type = "RollingUpdate"
      rolling_update {
        max_unavailable = "0"
        max_surge       = "1"
      }
    }
    template {
      metadata {
        labels = local.labels.relay
        # A new topology (a POP added) restarts the relays one by one; flows come back from Redis.
        annotations = {
          "global-relay/topology-sha256" = sha256(var.topology_json)
          "global-relay/keys-sha256"     = local.keys_sha256
        }
      }
      spec {
        termination_grace_period_seconds = local.pre_stop + 45
        security_context {
          run_as_non_root = true
          run_as_user     = 1000
          run_as_group    = 1000
        }
        container {
          name  = "relay"
          image = var.relay_image
          dynamic "env" {
            for_each = merge(local.base_env, {
              RELAY_ROLE = "cluster"
              # The topology's backbone is the LoadBalancer IP; the pod binds the port locally.
              RELAY_BIND_HOST = "0.0.0.0"
              ADMIN_HOST      = "0.0.0.0"
              ADMIN_PORT      = tostring(local.admin_port)
              RELAY_DRAIN_MS  = "30000"
            })
            content {
              name  = env.key
              value = env.value
            }
          }
          env_from {
            secret_ref {
              name = kubernetes_secret_v1.keys.metadata[0].name
            }
          }
          port {
            name           = "backbone"
            container_port = local.backbone_port
            protocol       = "UDP"
          }
          port {
            name           = "admin"
            container_port = local.admin_port
          }
          readiness_probe {
            http_get {
              path = "/readyz"
              port = "admin"
            }
            period_seconds = 5
          }
          liveness_probe {
            http_get {
              path = "/healthz"
              port = "admin"
            }
            period_seconds = 10
          }
          lifecycle {
            pre_stop {
              exec {
                command = ["/bin/sh", "-c", "sleep ${local.pre_stop}"]
              }
            }
          }
          resources {
            requests = { cpu = "1", memory = "256Mi" }
            limits   = { memory = "512Mi" }
          }
          security_context {
            allow_privilege_escalation = false
            read_only_root_filesystem  = true
            capabilities {
              drop = ["ALL"]
            }
          }
          volume_mount {
            name       = "topology"
            mount_path = "/etc/global-relay"
            read_only  = true
          }
        }
        volume {
          name = "topology"
          config_map {
            name = kubernetes_config_map_v1.topology.metadata[0].name
          }
        }
      }
    }
  }
}

resource "kubernetes_service_v1" "backbone" {
  metadata {
    name        = "relay-backbone"
    namespace   = local.ns
    labels      = local.labels.relay
    annotations = var.service_annotations
  }
  spec {
    type                        = "LoadBalancer"
    load_balancer_ip            = local.backbone_host
    load_balancer_source_ranges = var.peer_cidrs
    # Keep the POP's source address: the relay answers frames to where they came from.
    external_traffic_policy = "Local"
    selector                = local.selector.relay
    port {
      name        = "backbone"
      protocol    = "UDP"
      port        = local.backbone_port
      target_port = "backbone"
    }
  }
}

resource "kubernetes_pod_disruption_budget_v1" "relay" {
  metadata {
    name      = "relay"
    namespace = local.ns
  }
  spec {
    min_available = "1"
    selector {
      match_labels = local.selector.relay
    }
  }
}

# Every POP sends this cluster's frames to `backbone` from the topology: the Service must own it.
check "backbone_service_owns_backbone_ip" {
  assert {
    condition     = contains(try([for i in kubernetes_service_v1.backbone.status[0].load_balancer[0].ingress : i.ip], []), local.backbone_host)
    error_message = "The relay-backbone Service of cluster ${var.cluster_name} did not get ${local.backbone_host}: reserve that static IP in the cloud (or set the provider's static-IP annotation in kubernetes.service_annotations) so POPs can reach the cluster."
  }
}
