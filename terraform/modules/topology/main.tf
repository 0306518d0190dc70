# The topology every component loads (TOPOLOGY_FILE for relays and transceivers, KV / a variable
# for the edge), in the exact shape of shared/topology/schema.ts. Lists follow the map keys in
# lexical order (Terraform iterates maps that way); optional fields are left out, not null.
locals {
  topology = merge({
    version          = 1
    globalVip        = var.global_vip
    defaultClusterId = var.clusters[var.default_cluster].id
    clusters = [for name, c in var.clusters : merge(
      {
        id            = c.id
        name          = name
        region        = c.region
        continent     = c.continent
        countries     = c.countries
        latitude      = c.latitude
        longitude     = c.longitude
        signallingUrl = c.signalling_url
        backbone      = c.backbone
        backboneCidrs = c.backbone_cidrs
        capacity      = c.capacity
      },
      { for k, v in { vip = c.vip } : k => v if v != null },
    )]
    pops = [for name, p in var.pops : merge(
      {
        id            = p.id
        name          = name
        region        = p.region
        latitude      = p.latitude
        longitude     = p.longitude
        vip           = coalesce(p.vip, var.global_vip)
        backbone      = p.backbone
        backboneCidrs = p.backbone_cidrs
      },
      { for k, v in { clusterId = try(var.clusters[p.cluster].id, null), vipTcpPort = var.vip_tcp_port } : k => v if v != null },
    )]
  }, { for k, v in { globalVipTcpPort = var.vip_tcp_port } : k => v if v != null })
}
