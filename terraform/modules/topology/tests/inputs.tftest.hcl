# The scalar inputs and the misspelt-attribute check (as_written).

variables {
  global_vip      = "192.0.2.10:3478"
  default_cluster = "fra1"
  clusters = {
    fra1 = {
      id         = 1, region = "eu-central", continent = "EU", countries = ["DE", "FR"], latitude = 50.11, longitude = 8.68
      capacity   = 1000, signalling_url = "https://fra1.signal.example.net", backend_url = "wss://agent.fra1.example.net/v1/voice"
      backbone   = "198.51.100.10:5100", backbone_cidrs = ["198.51.100.0/28"]
      kubernetes = { context = "fra1" }
    }
    iad1 = {
      id         = 2, region = "us-east", continent = "NA", latitude = 38.95, longitude = -77.45
      capacity   = 3200, signalling_url = "http://iad1.signal.example.net:8080/api", backend_url = "ws://agent.iad1.example.net"
      backbone   = "[2001:db8::1a]:5100", backbone_cidrs = ["198.51.100.16/28", "2001:db8:1a::/48"], vip = "198.51.100.27:3478"
      kubernetes = { context = "iad1", transceivers_max = 16, sessions_per_pod = 200 }
    }
  }
  pops = {
    fra = {
      id       = 1, region = "eu-central-1", latitude = 50.03, longitude = 8.57, cluster = "fra1"
      backbone = "203.0.113.10:4478", backbone_cidrs = ["203.0.113.8/29"]
      aws      = { vpc_id = "vpc-0a1", public_subnet_ids = ["subnet-0a1"], private_subnet_ids = ["subnet-0b1"], redis_url = "rediss://redis.fra1.example.net:6380" }
    }
    iad = {
      id       = 2, region = "us-east-1", latitude = 38.94, longitude = -77.46, vip = "192.0.2.11:3478"
      backbone = "[2001:db8::10]:4478", backbone_cidrs = ["2001:db8:10::/48"]
      aws      = { vpc_id = "vpc-0a2", public_subnet_ids = ["subnet-0a2"], private_subnet_ids = ["subnet-0b2"] }
    }
  }
}

# global_vip may be IPv6 in brackets.
run "global_vip_ipv6" {
  command = plan

  variables {
    global_vip = "[2001:db8::10]:3478"
  }

  assert {
    condition     = output.topology.globalVip == "[2001:db8::10]:3478"
    error_message = "globalVip"
  }
}

# global_vip port from 1 to 65535.
run "global_vip_port" {
  command = plan

  variables {
    global_vip = "192.0.2.10:99999"
  }

  expect_failures = [var.global_vip]
}

# global_vip is a literal IP.
run "global_vip_host" {
  command = plan

  variables {
    global_vip = "anycast.example.net:3478"
  }

  expect_failures = [var.global_vip]
}

# An IPv6 global_vip needs brackets.
run "global_vip_unbracketed_ipv6" {
  command = plan

  variables {
    global_vip = "2001:db8::10:3478"
  }

  expect_failures = [var.global_vip]
}

# default_cluster is a key of clusters.
run "default_cluster_unknown" {
  command = plan

  variables {
    default_cluster = "ams1"
  }

  expect_failures = [var.default_cluster]
}

# as_written equal to the inputs passes.
run "as_written_matches" {
  command = plan

  variables {
    as_written = { clusters = var.clusters, pops = var.pops }
  }

  assert {
    condition     = length(output.pops) == 2
    error_message = "two POPs"
  }
}

# A misspelt optional attribute of a POP is an error, not a silent default.
run "as_written_misspelt_pop_attribute" {
  command = plan

  variables {
    pops       = merge(var.pops, { iad = merge(var.pops.iad, { clsuter = "iad1" }) })
    as_written = { clusters = var.clusters, pops = merge(var.pops, { iad = merge(var.pops.iad, { clsuter = "iad1" }) }) }
  }

  expect_failures = [var.as_written]
}

# Nested objects (kubernetes, aws) are checked too.
run "as_written_misspelt_nested_attribute" {
  command = plan

  variables {
    clusters   = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { kubernetes = { context = "fra1", sessions_per_p0d = 50 } }) })
    as_written = { clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { kubernetes = { context = "fra1", sessions_per_p0d = 50 } }) }), pops = var.pops }
  }

  expect_failures = [var.as_written]
}

# A POP without vip uses global_vip; without cluster it has no clusterId; aws defaults fill in.
run "pop_defaults" {
  command = plan

  variables {
    global_vip = var.global_vip
  }

  assert {
    condition     = [for p in output.topology.pops : p.vip] == ["192.0.2.10:3478", "192.0.2.11:3478"]
    error_message = "POP vips"
  }

  assert {
    condition     = [for p in output.topology.pops : try(p.clusterId, null)] == [1, null]
    error_message = "POP clusterIds"
  }

  assert {
    condition     = output.pops.iad.aws.instance_type == "c6in.large" && output.pops.iad.aws.min_size == 2 && output.pops.iad.aws.max_size == 6 && output.pops.iad.aws.traffic_dial == 100
    error_message = "aws defaults"
  }

  assert {
    condition     = output.clusters.fra1.kubernetes.namespace == "global-relay" && output.clusters.fra1.kubernetes.drain_seconds == 300
    error_message = "kubernetes defaults"
  }

  assert {
    condition     = output.topology.defaultClusterId == 1
    error_message = "defaultClusterId"
  }
}


# vip_tcp_port: a whole port number or null.
run "vip_tcp_port_out_of_range" {
  command = plan

  variables {
    vip_tcp_port = 70000
  }

  expect_failures = [var.vip_tcp_port]
}

run "vip_tcp_port_fractional" {
  command = plan

  variables {
    vip_tcp_port = 443.5
  }

  expect_failures = [var.vip_tcp_port]
}
