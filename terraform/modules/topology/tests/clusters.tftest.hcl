# Every validation of var.clusters (variables.tf, in order): one run each that breaks only that
# rule, plus the edge values that must still pass. test/terraform checks the messages.

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

# The base network passes: IPv6 backbone, http signalling with a port and path, capacity = transceivers_max x sessions_per_pod.
run "base_network_is_valid" {
  command = plan

  variables {
    global_vip = var.global_vip
  }

  assert {
    condition     = length(output.topology.clusters) == 2
    error_message = "two clusters"
  }
}

# At least one cluster. (Checks that refer to clusters, such as default_cluster's, wait for valid clusters.)
run "no_cluster" {
  command = plan

  variables {
    clusters = {}
  }

  expect_failures = [var.clusters]
}

# Keys are lower-case names.
run "cluster_key" {
  command = plan

  variables {
    clusters = merge(var.clusters, { "Fra_2" = merge(var.clusters.iad1, { id = 3 }) })
  }

  expect_failures = [var.clusters]
}

# Ids are whole numbers.
run "cluster_id_not_whole" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { id = 2.5 }) })
  }

  expect_failures = [var.clusters]
}

# Ids start at 1.
run "cluster_id_zero" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { id = 0 }) })
  }

  expect_failures = [var.clusters]
}

# Ids fit in 16 bits.
run "cluster_id_too_big" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { id = 65536 }) })
  }

  expect_failures = [var.clusters]
}

# Ids are unique.
run "cluster_id_repeated" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { id = 1 }) })
  }

  expect_failures = [var.clusters]
}

# Regions are lower-case labels.
run "cluster_region" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { region = "US East" }) })
  }

  expect_failures = [var.clusters]
}

# Continents are the seven codes.
run "cluster_continent" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { continent = "AM" }) })
  }

  expect_failures = [var.clusters]
}

# Countries are ISO 3166 alpha-2 in capitals.
run "cluster_country" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { countries = ["US", "usa"] }) })
  }

  expect_failures = [var.clusters]
}

# Latitude within +-90.
run "cluster_latitude" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { latitude = 90.5 }) })
  }

  expect_failures = [var.clusters]
}

# Longitude within +-180.
run "cluster_longitude" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { longitude = -180.5 }) })
  }

  expect_failures = [var.clusters]
}

# Capacity is a whole number.
run "cluster_capacity_not_whole" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { capacity = 10.5 }) })
  }

  expect_failures = [var.clusters]
}

# Capacity at most transceivers_max x sessions_per_pod.
run "cluster_capacity_over_pods" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { capacity = 3201 }) })
  }

  expect_failures = [var.clusters]
}

# signalling_url is http(s).
run "cluster_signalling_url" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { signalling_url = "ftp://iad1.example.net" }) })
  }

  expect_failures = [var.clusters]
}

# backend_url is ws(s).
run "cluster_backend_url" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { backend_url = "https://agent.example.net" }) })
  }

  expect_failures = [var.clusters]
}

# backbone port from 1 to 65535.
run "cluster_backbone_port" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { backbone = "198.51.100.10:65536" }) })
  }

  expect_failures = [var.clusters]
}

# backbone is a literal IP.
run "cluster_backbone_host" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { backbone = "relay.fra1.example.net:5100" }) })
  }

  expect_failures = [var.clusters]
}

# vip, when set, is ip:port too.
run "cluster_vip_address" {
  command = plan

  variables {
    clusters = merge(var.clusters, { iad1 = merge(var.clusters.iad1, { vip = "198.51.100.300:3478" }) })
  }

  expect_failures = [var.clusters]
}

# backbone_cidrs is not empty.
run "cluster_cidrs_empty" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { backbone_cidrs = [] }) })
  }

  expect_failures = [var.clusters]
}

# No /0: that would accept frames from anywhere.
run "cluster_cidr_slash_0" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { backbone_cidrs = ["198.51.100.0/28", "::/0"] }) })
  }

  expect_failures = [var.clusters]
}

# A CIDR's prefix fits its family.
run "cluster_cidr_malformed" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { backbone_cidrs = ["198.51.100.0/33"] }) })
  }

  expect_failures = [var.clusters]
}

# kubernetes.context is not blank.
run "cluster_kubernetes_context" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { kubernetes = merge(var.clusters.fra1.kubernetes, { context = " " }) }) })
  }

  expect_failures = [var.clusters]
}

# 1 <= transceivers_min <= transceivers_max.
run "cluster_kubernetes_pods" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { kubernetes = merge(var.clusters.fra1.kubernetes, { transceivers_min = 20, transceivers_max = 10 }) }) })
  }

  expect_failures = [var.clusters]
}

# drain_seconds at most an hour.
run "cluster_kubernetes_drain" {
  command = plan

  variables {
    clusters = merge(var.clusters, { fra1 = merge(var.clusters.fra1, { kubernetes = merge(var.clusters.fra1.kubernetes, { drain_seconds = 3601 }) }) })
  }

  expect_failures = [var.clusters]
}

