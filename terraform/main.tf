# One code base, two kinds of state (docs/operations/deploy.md):
#   global stack  (deploy_cluster = null): the edge worker, the anycast accelerator, every POP;
#   cluster stack (deploy_cluster = "<key>"): that cluster's Kubernetes resources.
# Both read the same tfvars and so render the same topology.

locals {
  global_stack = var.deploy_cluster == null

  # Each stack has its own workspace (state). Applying the cluster stack in the global state would
  # plan to destroy the edge and every POP; the guard below refuses that plan.
  expected_workspace = var.deploy_cluster == null ? "global" : "cluster-${var.deploy_cluster}"

  vip_host = trim(replace(var.global_vip, "/:[0-9]+$/", ""), "[]")
  vip_port = tonumber(regex("[0-9]+$", var.global_vip))

  # Known backbone peers: POPs accept frames only from cluster networks, clusters only from POPs.
  pop_backbone_cidrs     = distinct(flatten([for p in values(var.pops) : p.backbone_cidrs]))
  cluster_backbone_cidrs = distinct(flatten([for c in values(var.clusters) : c.backbone_cidrs]))
}

resource "terraform_data" "stack_guard" {
  input = local.expected_workspace
  lifecycle {
    precondition {
      condition     = terraform.workspace == local.expected_workspace
      error_message = "This run applies the ${local.global_stack ? "global stack" : "cluster stack of ${var.deploy_cluster}"}, whose state is workspace \"${local.expected_workspace}\", but the selected workspace is \"${terraform.workspace}\": run `terraform workspace select ${local.expected_workspace}` (or fix deploy_cluster)."
    }
  }
}

module "edge" {
  source = "./modules/edge"
  count  = local.global_stack ? 1 : 0

  account_id          = var.edge.account_id
  zone_id             = var.edge.zone_id
  worker_name         = var.edge.worker_name
  script_path         = "${path.root}/${var.edge.script_path}"
  compatibility_date  = var.edge.compatibility_date
  compatibility_flags = var.edge.compatibility_flags
  routes              = var.edge.routes
  custom_domain       = var.edge.custom_domain
  rate_limit          = var.edge.rate_limit
  analytics_dataset   = var.edge.analytics_dataset
  topology_json       = local.topology_json
  cluster_secret      = var.cluster_secret
  call_id_keys        = var.call_id_keys
  extra_secrets       = var.edge_secrets
}

module "anycast" {
  source = "./modules/anycast"
  count  = local.global_stack ? 1 : 0

  name            = "${var.name_prefix}-global-relay"
  vip_host        = local.vip_host
  vip_port        = local.vip_port
  byoip           = var.anycast.byoip
  client_affinity = var.anycast.client_affinity
}

module "pop" {
  source   = "./modules/pop"
  for_each = local.global_stack ? var.pops : {}

  name_prefix        = var.name_prefix
  pop_name           = each.key
  pop_id             = each.value.id
  region             = each.value.region
  listener_arn       = module.anycast[0].listener_arn
  global_vip_port    = local.vip_port
  vip_port           = tonumber(regex("[0-9]+$", coalesce(each.value.vip, var.global_vip)))
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
  relay_image        = var.images.relay
  topology_json      = local.topology_json
  hint_keys          = var.hint_keys
}

module "cluster" {
  source   = "./modules/cluster"
  for_each = { for k, c in var.clusters : k => c if k == var.deploy_cluster }

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
  relay_image         = var.images.relay
  transceiver_image   = var.images.transceiver
  redis_image         = var.images.redis
  topology_json       = local.topology_json
  hint_keys           = var.hint_keys
  call_id_keys        = var.call_id_keys
  cluster_secret      = var.cluster_secret
}
