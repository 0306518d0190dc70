# The inputs the topology is made of, typed and validated here and only here: the root module
# (terraform/main.tf) and the provider-free preview root (terraform/preview/) pass them through.
# `terraform test` in this directory checks every validation offline (tests/*.tftest.hcl).
#
# Addresses are inputs, not results: the operator allocates the anycast VIP (BYOIP) and the
# backbone addresses first, so the topology is known before `terraform apply` and reviewable in the
# plan.

variable "global_vip" {
  description = "The Global Relay VIP, \"ip:port\": the anycast address every SDP answer advertises (the Global Accelerator BYOIP address, UDP 3478 by convention)."
  type        = string
  validation {
    condition     = can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", var.global_vip)) && can(cidrhost("${trim(replace(var.global_vip, "/:[0-9]+$/", ""), "[]")}/${strcontains(var.global_vip, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", var.global_vip)) >= 1 && tonumber(regex("[0-9]+$", var.global_vip)) <= 65535, false)
    error_message = "global_vip must be \"ip:port\" or \"[ipv6]:port\" with a literal IP and a port from 1 to 65535; got ${var.global_vip}."
  }
}

variable "vip_tcp_port" {
  description = "TCP port of ICE-TCP on the VIP (RFC 6544), or null for none: every answer then also carries a passive TCP candidate on the VIP at this port (topology globalVipTcpPort), and every POP listens on it at its VIP address (pops[].vipTcpPort). 443 in production, where networks that drop UDP still pass it; the accelerator and the POPs' load balancers must forward TCP on this port."
  type        = number
  default     = null
  validation {
    condition     = var.vip_tcp_port == null || try(var.vip_tcp_port == floor(var.vip_tcp_port) && var.vip_tcp_port >= 1 && var.vip_tcp_port <= 65535, false)
    error_message = "vip_tcp_port must be null or a whole port number from 1 to 65535; got ${coalesce(var.vip_tcp_port, 0)}."
  }
}

variable "default_cluster" {
  description = "Key of the cluster the edge steers to when it knows nothing about the client (topology defaultClusterId)."
  type        = string
  validation {
    condition     = contains(keys(var.clusters), var.default_cluster)
    error_message = "default_cluster must be a key of clusters; got ${var.default_cluster}."
  }
}

variable "clusters" {
  description = <<-EOT
    Regional clusters, keyed by cluster name (the topology `name`). One entry = one cluster: an
    existing Kubernetes cluster that runs transceivers, the cluster relay and Redis.
      id             1-65535, carried in every routing hint and call id: never reuse a retired id
      region         free-form region label (lower-case), e.g. "eu-central"
      continent      AF, AN, AS, EU, NA, OC or SA (steering falls back to it)
      countries      ISO 3166 alpha-2 codes this cluster prefers when the client has no coordinates
      latitude/longitude  where the cluster is (steering measures distance from the client)
      capacity       sessions the cluster holds (steering weighs load against it)
      signalling_url internal signalling API the edge calls (https in production)
      backbone       the cluster relay's public backbone listener, "ip:port" (its LoadBalancer IP)
      backbone_cidrs networks the cluster's relay and transceivers send backbone frames from
      vip            optional second ICE candidate advertised at lower priority, "ip:port"
      backend_url    WebSocket URL of the voice backend (model / agent) each session connects to
      kubernetes     context, namespace, transceiver pod range, sessions per pod, relay replicas,
                     annotations for the backbone Service, drain time on SIGTERM
  EOT
  type = map(object({
    id             = number
    region         = string
    continent      = string
    countries      = optional(list(string), [])
    latitude       = number
    longitude      = number
    capacity       = number
    signalling_url = string
    backbone       = string
    backbone_cidrs = list(string)
    vip            = optional(string)
    backend_url    = string
    kubernetes = object({
      context             = string
      namespace           = optional(string, "global-relay")
      transceivers_min    = optional(number, 2)
      transceivers_max    = optional(number, 16)
      sessions_per_pod    = optional(number, 200)
      relay_replicas      = optional(number, 2)
      gateway_replicas    = optional(number, 2)
      service_annotations = optional(map(string), {})
      drain_seconds       = optional(number, 300)
    })
  }))

  validation {
    condition     = length(var.clusters) > 0
    error_message = "At least one cluster is required in clusters."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !can(regex("^[a-z0-9][a-z0-9-]{0,62}$", k))]) == 0
    error_message = "Cluster keys (the cluster name) must be lower-case letters, digits and '-', 1-63 characters, starting with a letter or digit; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}" if !can(regex("^[a-z0-9][a-z0-9-]{0,62}$", k))])}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !(c.id == floor(c.id) && c.id >= 1 && c.id <= 65535)]) == 0
    error_message = "Cluster ids must be whole numbers from 1 to 65535; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.id = ${c.id}" if !(c.id == floor(c.id) && c.id >= 1 && c.id <= 65535)])}."
  }
  validation {
    condition     = length(distinct([for c in values(var.clusters) : c.id])) == length(var.clusters)
    error_message = "Cluster ids must be unique (the id is carried in every hint and call id); repeated: ${join(", ", [for id, ks in { for k, c in var.clusters : tostring(c.id) => k... } : "id ${id} in clusters.${join(" and clusters.", ks)}" if length(ks) > 1])}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !can(regex("^[a-z0-9][a-z0-9-]{0,62}$", c.region))]) == 0
    error_message = "Cluster regions must be lower-case letters, digits and '-', 1-63 characters; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.region = ${c.region}" if !can(regex("^[a-z0-9][a-z0-9-]{0,62}$", c.region))])}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !contains(["AF", "AN", "AS", "EU", "NA", "OC", "SA"], c.continent)]) == 0
    error_message = "Cluster continents must be one of AF, AN, AS, EU, NA, OC, SA; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.continent = ${c.continent}" if !contains(["AF", "AN", "AS", "EU", "NA", "OC", "SA"], c.continent)])}."
  }
  validation {
    condition     = length(flatten([for k, c in var.clusters : [for x in c.countries : x if !can(regex("^[A-Z]{2}$", x))]])) == 0
    error_message = "Cluster countries must be ISO 3166 alpha-2 codes in capitals such as \"DE\"; not valid: ${join(", ", flatten([for k, c in var.clusters : [for x in c.countries : "clusters.${k}.countries ${x}" if !can(regex("^[A-Z]{2}$", x))]]))}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !(c.latitude >= -90 && c.latitude <= 90 && c.longitude >= -180 && c.longitude <= 180)]) == 0
    error_message = "Cluster latitude must be between -90 and 90 and longitude between -180 and 180; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k} (latitude ${c.latitude}, longitude ${c.longitude})" if !(c.latitude >= -90 && c.latitude <= 90 && c.longitude >= -180 && c.longitude <= 180)])}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !(c.capacity == floor(c.capacity) && c.capacity >= 1 && c.capacity <= 10000000 && c.capacity <= c.kubernetes.transceivers_max * c.kubernetes.sessions_per_pod)]) == 0
    error_message = "Cluster capacity must be a whole number of sessions from 1 to 10000000, and at most kubernetes.transceivers_max times kubernetes.sessions_per_pod; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.capacity = ${c.capacity}" if !(c.capacity == floor(c.capacity) && c.capacity >= 1 && c.capacity <= 10000000 && c.capacity <= c.kubernetes.transceivers_max * c.kubernetes.sessions_per_pod)])}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !can(regex("^https?://[^\\s/]+(/\\S*)?$", c.signalling_url))]) == 0
    error_message = "Cluster signalling_url must be an http(s) URL such as \"https://fra1.signal.example.net\"; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.signalling_url = ${c.signalling_url}" if !can(regex("^https?://[^\\s/]+(/\\S*)?$", c.signalling_url))])}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !can(regex("^wss?://[^\\s/]+(/\\S*)?$", c.backend_url))]) == 0
    error_message = "Cluster backend_url must be a ws:// or wss:// URL of the voice backend; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.backend_url = ${c.backend_url}" if !can(regex("^wss?://[^\\s/]+(/\\S*)?$", c.backend_url))])}."
  }
  validation {
    condition     = length(concat([for k, c in var.clusters : k if !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", c.backbone)) && can(cidrhost("${trim(replace(c.backbone, "/:[0-9]+$/", ""), "[]")}/${strcontains(c.backbone, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", c.backbone)) >= 1 && tonumber(regex("[0-9]+$", c.backbone)) <= 65535, false))], [for k, c in var.clusters : k if c.vip != null && !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", c.vip)) && can(cidrhost("${trim(replace(c.vip, "/:[0-9]+$/", ""), "[]")}/${strcontains(c.vip, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", c.vip)) >= 1 && tonumber(regex("[0-9]+$", c.vip)) <= 65535, false))])) == 0
    error_message = "Cluster backbone and vip must be \"ip:port\" or \"[ipv6]:port\" with a literal IP and a port from 1 to 65535; not valid: ${join(", ", concat([for k, c in var.clusters : "clusters.${k}.backbone = ${c.backbone}" if !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", c.backbone)) && can(cidrhost("${trim(replace(c.backbone, "/:[0-9]+$/", ""), "[]")}/${strcontains(c.backbone, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", c.backbone)) >= 1 && tonumber(regex("[0-9]+$", c.backbone)) <= 65535, false))], [for k, c in var.clusters : "clusters.${k}.vip = ${c.vip}" if c.vip != null && !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", c.vip)) && can(cidrhost("${trim(replace(c.vip, "/:[0-9]+$/", ""), "[]")}/${strcontains(c.vip, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", c.vip)) >= 1 && tonumber(regex("[0-9]+$", c.vip)) <= 65535, false))]))}."
  }
  validation {
    condition     = length(flatten([for k, c in var.clusters : concat(length(c.backbone_cidrs) == 0 ? [k] : [], [for x in c.backbone_cidrs : x if !can(cidrhost(x, 0)) || endswith(x, "/0")])])) == 0
    error_message = "Cluster backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as \"203.0.113.0/24\" or \"2001:db8::/48\"; not valid: ${join(", ", flatten([for k, c in var.clusters : concat(length(c.backbone_cidrs) == 0 ? ["clusters.${k}.backbone_cidrs (empty)"] : [], [for x in c.backbone_cidrs : "clusters.${k}.backbone_cidrs ${x}" if !can(cidrhost(x, 0)) || endswith(x, "/0")])]))}."
  }
  validation {
    condition     = length([for k, c in var.clusters : k if !(length(trimspace(c.kubernetes.context)) > 0 && can(regex("^[a-z0-9][a-z0-9-]{0,62}$", c.kubernetes.namespace)) && c.kubernetes.transceivers_min >= 1 && c.kubernetes.transceivers_min <= c.kubernetes.transceivers_max && c.kubernetes.transceivers_max <= 65535 && c.kubernetes.sessions_per_pod >= 1 && c.kubernetes.relay_replicas >= 1 && c.kubernetes.gateway_replicas >= 1 && c.kubernetes.drain_seconds >= 0 && c.kubernetes.drain_seconds <= 3600)]) == 0
    error_message = "Cluster kubernetes settings need a non-empty context, a namespace of lower-case letters, digits and '-', 1 <= transceivers_min <= transceivers_max <= 65535, sessions_per_pod, relay_replicas and gateway_replicas of at least 1, and drain_seconds from 0 to 3600; not valid: ${join(", ", [for k, c in var.clusters : "clusters.${k}.kubernetes" if !(length(trimspace(c.kubernetes.context)) > 0 && can(regex("^[a-z0-9][a-z0-9-]{0,62}$", c.kubernetes.namespace)) && c.kubernetes.transceivers_min >= 1 && c.kubernetes.transceivers_min <= c.kubernetes.transceivers_max && c.kubernetes.transceivers_max <= 65535 && c.kubernetes.sessions_per_pod >= 1 && c.kubernetes.relay_replicas >= 1 && c.kubernetes.gateway_replicas >= 1 && c.kubernetes.drain_seconds >= 0 && c.kubernetes.drain_seconds <= 3600)])}."
  }
}

variable "pops" {
  description = <<-EOT
    Global Relay POPs, keyed by POP name (the topology `name`). One entry = one POP: an endpoint
    group of the anycast accelerator in one AWS region, a UDP load balancer and the relay instances.
      id             1-65535, carried in every backbone frame: never reuse a retired id
      region         the AWS region ("eu-central-1"); one POP per region
      latitude/longitude  where the POP is
      vip            optional: the address the relay binds for clients, "ip:port" (default: global_vip)
      backbone       where cluster relays send frames back to this POP, "ip:port": a public Elastic
                     IP the operator allocated in this region (bound to the POP's load balancer)
      backbone_cidrs networks this POP's relays send backbone frames from (NAT egress addresses)
      cluster        optional key of a cluster co-located with this POP (frames go to its
                     transceivers directly; needs aws.redis_url, that cluster's Redis)
      aws            VPC, subnets, instance type and size of the relay group, traffic dial (0 drains)
  EOT
  type = map(object({
    id             = number
    region         = string
    latitude       = number
    longitude      = number
    vip            = optional(string)
    backbone       = string
    backbone_cidrs = list(string)
    cluster        = optional(string)
    aws = object({
      vpc_id             = string
      public_subnet_ids  = list(string)
      private_subnet_ids = list(string)
      instance_type      = optional(string, "c6in.large")
      min_size           = optional(number, 2)
      max_size           = optional(number, 6)
      traffic_dial       = optional(number, 100)
      redis_url          = optional(string)
    })
  }))

  validation {
    condition     = length(var.pops) > 0
    error_message = "At least one POP is required in pops."
  }
  validation {
    condition     = length([for k, p in var.pops : k if !can(regex("^[a-z0-9][a-z0-9-]{0,62}$", k))]) == 0
    error_message = "POP keys (the POP name) must be lower-case letters, digits and '-', 1-63 characters, starting with a letter or digit; not valid: ${join(", ", [for k, p in var.pops : "pops.${k}" if !can(regex("^[a-z0-9][a-z0-9-]{0,62}$", k))])}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if !(p.id == floor(p.id) && p.id >= 1 && p.id <= 65535)]) == 0
    error_message = "POP ids must be whole numbers from 1 to 65535; not valid: ${join(", ", [for k, p in var.pops : "pops.${k}.id = ${p.id}" if !(p.id == floor(p.id) && p.id >= 1 && p.id <= 65535)])}."
  }
  validation {
    condition     = length(distinct([for p in values(var.pops) : p.id])) == length(var.pops)
    error_message = "POP ids must be unique (the id is carried in every backbone frame); repeated: ${join(", ", [for id, ks in { for k, p in var.pops : tostring(p.id) => k... } : "id ${id} in pops.${join(" and pops.", ks)}" if length(ks) > 1])}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if !can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", p.region))]) == 0
    error_message = "POP regions must be AWS region names such as \"eu-central-1\"; not valid: ${join(", ", [for k, p in var.pops : "pops.${k}.region = ${p.region}" if !can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", p.region))])}."
  }
  validation {
    condition     = length(distinct([for p in values(var.pops) : p.region])) == length(var.pops)
    error_message = "Only one POP per AWS region (Global Accelerator takes one endpoint group per region and listener); shared: ${join(", ", [for r, ks in { for k, p in var.pops : p.region => k... } : "${r} by pops.${join(" and pops.", ks)}" if length(ks) > 1])}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if !(p.latitude >= -90 && p.latitude <= 90 && p.longitude >= -180 && p.longitude <= 180)]) == 0
    error_message = "POP latitude must be between -90 and 90 and longitude between -180 and 180; not valid: ${join(", ", [for k, p in var.pops : "pops.${k} (latitude ${p.latitude}, longitude ${p.longitude})" if !(p.latitude >= -90 && p.latitude <= 90 && p.longitude >= -180 && p.longitude <= 180)])}."
  }
  validation {
    condition     = length(concat([for k, p in var.pops : k if !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", p.backbone)) && can(cidrhost("${trim(replace(p.backbone, "/:[0-9]+$/", ""), "[]")}/${strcontains(p.backbone, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", p.backbone)) >= 1 && tonumber(regex("[0-9]+$", p.backbone)) <= 65535, false))], [for k, p in var.pops : k if p.vip != null && !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", p.vip)) && can(cidrhost("${trim(replace(p.vip, "/:[0-9]+$/", ""), "[]")}/${strcontains(p.vip, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", p.vip)) >= 1 && tonumber(regex("[0-9]+$", p.vip)) <= 65535, false))])) == 0
    error_message = "POP backbone and vip must be \"ip:port\" or \"[ipv6]:port\" with a literal IP and a port from 1 to 65535; not valid: ${join(", ", concat([for k, p in var.pops : "pops.${k}.backbone = ${p.backbone}" if !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", p.backbone)) && can(cidrhost("${trim(replace(p.backbone, "/:[0-9]+$/", ""), "[]")}/${strcontains(p.backbone, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", p.backbone)) >= 1 && tonumber(regex("[0-9]+$", p.backbone)) <= 65535, false))], [for k, p in var.pops : "pops.${k}.vip = ${p.vip}" if p.vip != null && !(can(regex("^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]+):[0-9]{1,5}$", p.vip)) && can(cidrhost("${trim(replace(p.vip, "/:[0-9]+$/", ""), "[]")}/${strcontains(p.vip, "[") ? 128 : 32}", 0)) && try(tonumber(regex("[0-9]+$", p.vip)) >= 1 && tonumber(regex("[0-9]+$", p.vip)) <= 65535, false))]))}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if try(regex("[0-9]+$", coalesce(p.vip, var.global_vip)) == regex("[0-9]+$", p.backbone), false)]) == 0
    error_message = "A POP's vip port and backbone port must differ (both listen on the POP's load balancer); same port: ${join(", ", [for k, p in var.pops : "pops.${k}" if try(regex("[0-9]+$", coalesce(p.vip, var.global_vip)) == regex("[0-9]+$", p.backbone), false)])}."
  }
  validation {
    condition     = length(flatten([for k, p in var.pops : concat(length(p.backbone_cidrs) == 0 ? [k] : [], [for x in p.backbone_cidrs : x if !can(cidrhost(x, 0)) || endswith(x, "/0")])])) == 0
    error_message = "POP backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as \"203.0.113.0/24\" or \"2001:db8::/48\"; not valid: ${join(", ", flatten([for k, p in var.pops : concat(length(p.backbone_cidrs) == 0 ? ["pops.${k}.backbone_cidrs (empty)"] : [], [for x in p.backbone_cidrs : "pops.${k}.backbone_cidrs ${x}" if !can(cidrhost(x, 0)) || endswith(x, "/0")])]))}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if p.cluster != null && !contains(keys(var.clusters), coalesce(p.cluster, "-"))]) == 0
    error_message = "POP cluster must be a key of clusters (the cluster co-located with the POP); unknown: ${join(", ", [for k, p in var.pops : "pops.${k}.cluster = ${p.cluster}" if p.cluster != null && !contains(keys(var.clusters), coalesce(p.cluster, "-"))])}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if p.cluster != null && p.aws.redis_url == null]) == 0
    error_message = "A POP co-located with a cluster forwards straight to its transceivers and needs aws.redis_url (that cluster's Redis, where transceivers announce themselves); missing: ${join(", ", [for k, p in var.pops : "pops.${k}" if p.cluster != null && p.aws.redis_url == null])}."
  }
  validation {
    condition     = length([for k, p in var.pops : k if !(can(regex("^vpc-[0-9a-f]+$", p.aws.vpc_id)) && length(p.aws.public_subnet_ids) > 0 && length(p.aws.private_subnet_ids) > 0 && alltrue([for s in concat(p.aws.public_subnet_ids, p.aws.private_subnet_ids) : can(regex("^subnet-[0-9a-f]+$", s))]) && can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", p.aws.instance_type)) && p.aws.min_size >= 1 && p.aws.min_size <= p.aws.max_size && p.aws.max_size <= 100 && p.aws.traffic_dial >= 0 && p.aws.traffic_dial <= 100 && (p.aws.redis_url == null || can(regex("^rediss?://", p.aws.redis_url))))]) == 0
    error_message = "POP aws settings need vpc_id \"vpc-...\", at least one public and one private subnet \"subnet-...\", an instance_type such as \"c6in.large\", 1 <= min_size <= max_size <= 100, traffic_dial from 0 to 100, and redis_url (if set) starting with redis:// or rediss://; not valid: ${join(", ", [for k, p in var.pops : "pops.${k}.aws" if !(can(regex("^vpc-[0-9a-f]+$", p.aws.vpc_id)) && length(p.aws.public_subnet_ids) > 0 && length(p.aws.private_subnet_ids) > 0 && alltrue([for s in concat(p.aws.public_subnet_ids, p.aws.private_subnet_ids) : can(regex("^subnet-[0-9a-f]+$", s))]) && can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", p.aws.instance_type)) && p.aws.min_size >= 1 && p.aws.min_size <= p.aws.max_size && p.aws.max_size <= 100 && p.aws.traffic_dial >= 0 && p.aws.traffic_dial <= 100 && (p.aws.redis_url == null || can(regex("^rediss?://", p.aws.redis_url))))])}."
  }
}

variable "as_written" {
  description = <<-EOT
    clusters and pops exactly as the operator wrote them (type any: not converted). Converting a
    value to the object types above silently drops an attribute the type does not declare, so a
    misspelt optional attribute (`vpi`, `clsuter`, `aws.redis_uri`) would quietly take its
    default. When this is set, such an attribute is an error. The roots pass
    { clusters = var.clusters, pops = var.pops } from variables of type any.
  EOT
  type = object({
    clusters = any
    pops     = any
  })
  default = null
  validation {
    condition = length(concat(
      flatten([for k, x in try(var.as_written.clusters, {}) : concat(
        try([for a in keys(x) : a if !contains(keys(var.clusters[k]), a)], []),
        try([for a in keys(x.kubernetes) : a if !contains(keys(var.clusters[k].kubernetes), a)], []),
      )]),
      flatten([for k, x in try(var.as_written.pops, {}) : concat(
        try([for a in keys(x) : a if !contains(keys(var.pops[k]), a)], []),
        try([for a in keys(x.aws) : a if !contains(keys(var.pops[k].aws), a)], []),
      )]),
    )) == 0
    error_message = "clusters and pops entries may only set the attributes their types declare (Terraform would drop any other silently, so a misspelt optional attribute would take its default); unknown: ${join(", ", concat(
      flatten([for k, x in try(var.as_written.clusters, {}) : concat(
        try([for a in keys(x) : "clusters.${k}.${a} (expected one of ${join(", ", keys(var.clusters[k]))})" if !contains(keys(var.clusters[k]), a)], []),
        try([for a in keys(x.kubernetes) : "clusters.${k}.kubernetes.${a} (expected one of ${join(", ", keys(var.clusters[k].kubernetes))})" if !contains(keys(var.clusters[k].kubernetes), a)], []),
      )]),
      flatten([for k, x in try(var.as_written.pops, {}) : concat(
        try([for a in keys(x) : "pops.${k}.${a} (expected one of ${join(", ", keys(var.pops[k]))})" if !contains(keys(var.pops[k]), a)], []),
        try([for a in keys(x.aws) : "pops.${k}.aws.${a} (expected one of ${join(", ", keys(var.pops[k].aws))})" if !contains(keys(var.pops[k].aws), a)], []),
      )]),
    ))}."
  }
}
