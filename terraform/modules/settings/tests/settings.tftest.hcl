# Every validation of this module but the secrets' (secrets.tftest.hcl), in variables.tf order: one
# run each that breaks only that rule, plus the defaults and edge values that must pass.

variables {
  cluster_names = ["fra1", "iad1"]
  edge = {
    account_id         = "0123456789abcdef0123456789abcdef"
    zone_id            = "fedcba9876543210fedcba9876543210"
    compatibility_date = "2026-07-01"
    routes             = ["relay.example.net/v1/*"]
  }
  images = {
    relay       = "ghcr.io/example/global-relay-relay:0.1.0"
    transceiver = "ghcr.io/example/global-relay-transceiver@sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }
  # Test values only (32 bytes of ASCII digits); real keys come from TF_VAR_* (docs/operations/deploy.md).
  hint_keys      = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=,15:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  call_id_keys   = "0:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  cluster_secret = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  edge_secrets   = { API_KEY_HASHES = "x", METRICS_TOKEN = "y" }
}

# Unset settings take their defaults (null from the root counts as unset).
run "defaults" {
  command = plan

  variables {
    name_prefix     = null
    kubeconfig_path = null
    anycast         = null
  }

  assert {
    condition     = output.name_prefix == "gr" && output.kubeconfig_path == "~/.kube/config" && output.deploy_cluster == null
    error_message = "scalar defaults"
  }

  assert {
    condition     = output.anycast == { byoip = true, client_affinity = "SOURCE_IP" }
    error_message = "anycast defaults"
  }

  assert {
    condition     = output.edge.worker_name == "global-relay-edge" && output.edge.rate_limit.period == 60 && output.edge.custom_domain == null
    error_message = "edge defaults"
  }

  assert {
    condition     = output.images.redis == "redis:7.4-alpine"
    error_message = "images default"
  }
}

# name_prefix: lower-case, 2-20 characters, starting with a letter.
run "name_prefix" {
  command = plan

  variables {
    name_prefix = "1gr"
  }

  expect_failures = [var.name_prefix]
}

# name_prefix at most 20 characters.
run "name_prefix_too_long" {
  command = plan

  variables {
    name_prefix = "global-relay-production"
  }

  expect_failures = [var.name_prefix]
}

# deploy_cluster may name a cluster.
run "deploy_cluster_known" {
  command = plan

  variables {
    deploy_cluster = "iad1"
  }

  assert {
    condition     = output.deploy_cluster == "iad1"
    error_message = "deploy_cluster"
  }
}

# deploy_cluster is null or a key of clusters.
run "deploy_cluster_unknown" {
  command = plan

  variables {
    deploy_cluster = "ams1"
  }

  expect_failures = [var.deploy_cluster]
}

# kubeconfig_path is not blank.
run "kubeconfig_path" {
  command = plan

  variables {
    kubeconfig_path = "  "
  }

  expect_failures = [var.kubeconfig_path]
}

# client_affinity is NONE or SOURCE_IP.
run "anycast_client_affinity" {
  command = plan

  variables {
    anycast = { client_affinity = "SOURCE_IP_PORT" }
  }

  expect_failures = [var.anycast]
}

# account_id and zone_id are 32 lower-case hex characters.
run "edge_account_id" {
  command = plan

  variables {
    edge = merge(var.edge, { zone_id = "FEDCBA9876543210FEDCBA9876543210" })
  }

  expect_failures = [var.edge]
}

# worker_name is a lower-case name.
run "edge_worker_name" {
  command = plan

  variables {
    edge = merge(var.edge, { worker_name = "Global_Relay" })
  }

  expect_failures = [var.edge]
}

# compatibility_date is YYYY-MM-DD.
run "edge_compatibility_date" {
  command = plan

  variables {
    edge = merge(var.edge, { compatibility_date = "2026-7-1" })
  }

  expect_failures = [var.edge]
}

# script_path is not blank.
run "edge_script_path" {
  command = plan

  variables {
    edge = merge(var.edge, { script_path = "" })
  }

  expect_failures = [var.edge]
}

# A custom_domain alone is enough to reach the worker.
run "edge_custom_domain_only" {
  command = plan

  variables {
    edge = merge(var.edge, { routes = [], custom_domain = "relay.example.net" })
  }

  assert {
    condition     = output.edge.custom_domain == "relay.example.net"
    error_message = "custom_domain"
  }
}

# At least one route or a custom_domain.
run "edge_unreachable" {
  command = plan

  variables {
    edge = merge(var.edge, { routes = [] })
  }

  expect_failures = [var.edge]
}

# rate_limit.period is 10 or 60.
run "edge_rate_limit_period" {
  command = plan

  variables {
    edge = merge(var.edge, { rate_limit = { namespace_id = "1001", limit = 100, period = 30 } })
  }

  expect_failures = [var.edge]
}

# rate_limit.limit is a whole number of at least 1.
run "edge_rate_limit_limit" {
  command = plan

  variables {
    edge = merge(var.edge, { rate_limit = { namespace_id = "1001", limit = 0.5, period = 10 } })
  }

  expect_failures = [var.edge]
}

# rate_limit.namespace_id is a positive integer.
run "edge_rate_limit_namespace" {
  command = plan

  variables {
    edge = merge(var.edge, { rate_limit = { namespace_id = "0", limit = 100, period = 10 } })
  }

  expect_failures = [var.edge]
}

# analytics_dataset is letters, digits and _.
run "edge_analytics_dataset" {
  command = plan

  variables {
    edge = merge(var.edge, { analytics_dataset = "global-relay" })
  }

  expect_failures = [var.edge]
}

# No :latest.
run "images_latest" {
  command = plan

  variables {
    images = merge(var.images, { redis = "redis:latest" })
  }

  expect_failures = [var.images]
}

# An image without a tag or digest is not pinned.
run "images_unpinned" {
  command = plan

  variables {
    images = merge(var.images, { relay = "ghcr.io/example/global-relay-relay" })
  }

  expect_failures = [var.images]
}

# as_written equal to the inputs passes.
run "as_written_matches" {
  command = plan

  variables {
    as_written = { anycast = null, edge = var.edge, images = var.images }
  }

  assert {
    condition     = output.edge.routes == tolist(["relay.example.net/v1/*"])
    error_message = "edge"
  }
}

# A misspelt optional attribute is an error, not a silent default.
run "as_written_misspelt" {
  command = plan

  variables {
    edge       = merge(var.edge, { custom_domian = "relay.example.net" })
    as_written = { anycast = null, edge = merge(var.edge, { custom_domian = "relay.example.net" }), images = var.images }
  }

  expect_failures = [var.as_written]
}

# edge.rate_limit is checked too.
run "as_written_misspelt_nested" {
  command = plan

  variables {
    edge       = merge(var.edge, { rate_limit = { namespace_id = "1001", limit = 100, period = 10, burst = 5 } })
    as_written = { anycast = { byoip = false }, edge = merge(var.edge, { rate_limit = { namespace_id = "1001", limit = 100, period = 10, burst = 5 } }), images = var.images }
  }

  expect_failures = [var.as_written]
}
