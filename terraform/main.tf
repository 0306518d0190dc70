# One code base, two kinds of state (docs/operations/deploy.md):
#   global stack  (deploy_cluster = null): the edge worker, the anycast accelerator, every POP;
#   cluster stack (deploy_cluster = "<key>"): that cluster's Kubernetes resources.
# Both read the same tfvars and so render the same topology.

# The inputs, typed, defaulted and validated (variables.tf says why here and not there). Everything
# below reads module.topology and module.settings, never var.* directly.
module "topology" {
  source = "./modules/topology"

  global_vip      = var.global_vip
  default_cluster = var.default_cluster
  clusters        = var.clusters
  pops            = var.pops
  vip_tcp_port    = var.vip_tcp_port
  as_written      = { clusters = var.clusters, pops = var.pops }
}

module "settings" {
  source = "./modules/settings"

  name_prefix     = var.name_prefix
  cluster_names   = keys(module.topology.clusters)
  deploy_cluster  = var.deploy_cluster
  kubeconfig_path = var.kubeconfig_path
  anycast         = var.anycast
  edge            = var.edge
  images          = var.images
  conference      = var.conference
  hint_keys       = var.hint_keys
  call_id_keys    = var.call_id_keys
  cluster_secret  = var.cluster_secret
  backbone_keys   = var.backbone_keys
  edge_secrets    = var.edge_secrets
  as_written      = { anycast = var.anycast, edge = var.edge, images = var.images, conference = var.conference }
}

locals {
  deploy_cluster = module.settings.deploy_cluster
  global_stack   = local.deploy_cluster == null
  clusters       = module.topology.clusters
  pops           = module.topology.pops
  edge           = module.settings.edge
  images         = module.settings.images
  global_vip     = module.topology.topology.globalVip

  # Each stack has its own workspace (state). Applying the cluster stack in the global state would
  # plan to destroy the edge and every POP; the guard below refuses that plan.
  expected_workspace = local.deploy_cluster == null ? "global" : "cluster-${local.deploy_cluster}"

  vip_host = trim(replace(local.global_vip, "/:[0-9]+$/", ""), "[]")
  vip_port = tonumber(regex("[0-9]+$", local.global_vip))

  # ICE-TCP ports as the rendered topology carries them (absent, so null, when vip_tcp_port is).
  vip_tcp_port      = lookup(module.topology.topology, "globalVipTcpPort", null)
  pop_vip_tcp_ports = { for p in module.topology.topology.pops : p.name => lookup(p, "vipTcpPort", null) }

  # Known backbone peers: POPs accept frames only from cluster networks, clusters only from POPs.
  pop_backbone_cidrs     = distinct(flatten([for p in values(local.pops) : p.backbone_cidrs]))
  cluster_backbone_cidrs = distinct(flatten([for c in values(local.clusters) : c.backbone_cidrs]))
}

resource "terraform_data" "stack_guard" {
  input = local.expected_workspace
  lifecycle {
    precondition {
      condition     = terraform.workspace == local.expected_workspace
      error_message = "This run applies the ${local.global_stack ? "global stack" : "cluster stack of ${local.deploy_cluster}"}, whose state is workspace \"${local.expected_workspace}\", but the selected workspace is \"${terraform.workspace}\": run `terraform workspace select ${local.expected_workspace}` (or fix deploy_cluster)."
    }
  }
}

module "edge" {
  source = "./modules/edge"
  count  = local.global_stack ? 1 : 0

  account_id          = local.edge.account_id
  zone_id             = local.edge.zone_id
  worker_name         = local.edge.worker_name
  script_path         = "${path.root}/${local.edge.script_path}"
  compatibility_date  = local.edge.compatibility_date
  compatibility_flags = local.edge.compatibility_flags
  routes              = local.edge.routes
  custom_domain       = local.edge.custom_domain
  rate_limit          = local.edge.rate_limit
  analytics_dataset   = local.edge.analytics_dataset
  topology_json       = module.topology.topology_json
  cluster_secret      = module.settings.cluster_secret
  call_id_keys        = module.settings.call_id_keys
  extra_secrets       = module.settings.edge_secrets
}

module "anycast" {
  source = "./modules/anycast"
  count  = local.global_stack ? 1 : 0

  name            = "${module.settings.name_prefix}-global-relay"
  vip_host        = local.vip_host
  vip_port        = local.vip_port
  vip_tcp_port    = local.vip_tcp_port
  byoip           = module.settings.anycast.byoip
  client_affinity = module.settings.anycast.client_affinity
}

module "pop" {
  source   = "./modules/pop"
  for_each = local.global_stack ? local.pops : {}

  name_prefix        = module.settings.name_prefix
  pop_name           = each.key
  pop_id             = each.value.id
  region             = each.value.region
  listener_arn       = module.anycast[0].listener_arn
  global_vip_port    = local.vip_port
  vip_port           = tonumber(regex("[0-9]+$", coalesce(each.value.vip, local.global_vip)))
  backbone           = each.value.backbone
  peer_cidrs         = local.cluster_backbone_cidrs
  vpc_id             = each.value.aws.vpc_id
  public_subnet_ids  = each.value.aws.public_subnet_ids
  private_subnet_ids = each.value.aws.private_subnet_ids
  instance_type      = each.value.aws.instance_type
  min_size           = each.value.aws.min_size
  max_size           = each.value.aws.max_size
  traffic_dial       = each.value.aws.traffic_dial
  redis_url          = each.value.aws.redis_url
  relay_image        = local.images.relay
  topology_json      = module.topology.topology_json
  hint_keys          = module.settings.hint_keys

  # ICE-TCP (null, and nothing of it created, when vip_tcp_port is null).
  tcp_listener_arn    = module.anycast[0].tcp_listener_arn
  global_vip_tcp_port = local.vip_tcp_port
  vip_tcp_port        = local.pop_vip_tcp_ports[each.key]
}

module "cluster" {
  source   = "./modules/cluster"
  for_each = { for k, c in local.clusters : k => c if k == local.deploy_cluster }

  cluster_name        = each.key
  cluster_id          = each.value.id
  namespace           = each.value.kubernetes.namespace
  backbone            = each.value.backbone
  signalling_url      = each.value.signalling_url
  backend_url         = each.value.backend_url
  peer_cidrs          = local.pop_backbone_cidrs
  capacity            = each.value.capacity
  transceivers_min    = each.value.kubernetes.transceivers_min
  transceivers_max    = each.value.kubernetes.transceivers_max
  sessions_per_pod    = each.value.kubernetes.sessions_per_pod
  relay_replicas      = each.value.kubernetes.relay_replicas
  gateway_replicas    = each.value.kubernetes.gateway_replicas
  service_annotations = each.value.kubernetes.service_annotations
  drain_seconds       = each.value.kubernetes.drain_seconds
  relay_image         = local.images.relay
  transceiver_image   = local.images.transceiver
  redis_image         = local.images.redis
  topology_json       = module.topology.topology_json
  hint_keys           = module.settings.hint_keys
  call_id_keys        = module.settings.call_id_keys
  cluster_secret      = module.settings.cluster_secret

  # Conferences: transceivers of other clusters send conference frames straight to this cluster's
  # transceivers, so the port opens to their backbone_cidrs only (the topology refuses /0 there).
  conference            = module.settings.conference
  conference_peer_cidrs = distinct(flatten([for k, c in local.clusters : c.backbone_cidrs if k != each.key]))
  backbone_keys         = module.settings.backbone_keys
}
