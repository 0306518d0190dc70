# Every validation of var.pops (variables.tf, in order): one run each that breaks only that rule,
# plus the edge values that must still pass. test/terraform checks the messages.

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

# The base network passes: a co-located POP with its Redis, an IPv6 backbone, a POP vip.
run "base_network_is_valid" {
  command = plan

  variables {
    global_vip = var.global_vip
  }

  assert {
    condition     = length(output.topology.pops) == 2
    error_message = "two POPs"
  }
}

# Adding a POP is one map entry.
run "new_pop_is_valid" {
  command = plan

  variables {
    pops = merge(var.pops, { jnb = merge(var.pops.iad, { id = 9, region = "af-south-1", vip = null }, {}) })
  }

  assert {
    condition     = length(output.topology.pops) == 3
    error_message = "three POPs"
  }
}

# At least one POP.
run "no_pop" {
  command = plan

  variables {
    pops = {}
  }

  expect_failures = [var.pops]
}

# Keys are lower-case names.
run "pop_key" {
  command = plan

  variables {
    pops = merge(var.pops, { "JNB" = merge(var.pops.iad, { id = 9, region = "af-south-1" }) })
  }

  expect_failures = [var.pops]
}

# Ids are whole numbers.
run "pop_id_not_whole" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { id = 2.5 }) })
  }

  expect_failures = [var.pops]
}

# Ids fit in 16 bits.
run "pop_id_too_big" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { id = 65536 }) })
  }

  expect_failures = [var.pops]
}

# Ids are unique.
run "pop_id_repeated" {
  command = plan

  variables {
    pops = merge(var.pops, { jnb = merge(var.pops.iad, { id = 9, region = "af-south-1", vip = null }, { id = 2 }) })
  }

  expect_failures = [var.pops]
}

# Regions are AWS region names.
run "pop_region" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { region = "us-east" }) })
  }

  expect_failures = [var.pops]
}

# One POP per AWS region.
run "pop_region_shared" {
  command = plan

  variables {
    pops = merge(var.pops, { jnb = merge(var.pops.iad, { id = 9, region = "af-south-1", vip = null }, { region = "us-east-1" }) })
  }

  expect_failures = [var.pops]
}

# Latitude within +-90.
run "pop_latitude" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { latitude = -90.5 }) })
  }

  expect_failures = [var.pops]
}

# Longitude within +-180.
run "pop_longitude" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { longitude = 180.5 }) })
  }

  expect_failures = [var.pops]
}

# backbone port from 1 to 65535.
run "pop_backbone_port" {
  command = plan

  variables {
    pops = merge(var.pops, { fra = merge(var.pops.fra, { backbone = "203.0.113.10:0" }) })
  }

  expect_failures = [var.pops]
}

# backbone has a port.
run "pop_backbone_no_port" {
  command = plan

  variables {
    pops = merge(var.pops, { fra = merge(var.pops.fra, { backbone = "203.0.113.10" }) })
  }

  expect_failures = [var.pops]
}

# vip, when set, is ip:port too.
run "pop_vip_address" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { vip = "[2001:db8::zz]:3478" }) })
  }

  expect_failures = [var.pops]
}

# The vip (or global_vip) port and the backbone port differ.
run "pop_vip_port_is_backbone_port" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { vip = null, backbone = "[2001:db8::10]:3478" }) })
  }

  expect_failures = [var.pops]
}

# backbone_cidrs is not empty.
run "pop_cidrs_empty" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { backbone_cidrs = [] }) })
  }

  expect_failures = [var.pops]
}

# No /0.
run "pop_cidr_slash_0" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { backbone_cidrs = ["0.0.0.0/0"] }) })
  }

  expect_failures = [var.pops]
}

# A CIDR has a prefix length.
run "pop_cidr_malformed" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { backbone_cidrs = ["203.0.113.8"] }) })
  }

  expect_failures = [var.pops]
}

# cluster, when set, is a key of clusters.
run "pop_cluster_unknown" {
  command = plan

  variables {
    pops = merge(var.pops, { fra = merge(var.pops.fra, { cluster = "fra9" }) })
  }

  expect_failures = [var.pops]
}

# A co-located POP needs aws.redis_url.
run "pop_cluster_without_redis" {
  command = plan

  variables {
    pops = merge(var.pops, { fra = merge(var.pops.fra, { aws = merge(var.pops.fra.aws, { redis_url = null }) }) })
  }

  expect_failures = [var.pops]
}

# aws.vpc_id is vpc-<hex>.
run "pop_aws_vpc" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { aws = merge(var.pops.iad.aws, { vpc_id = "vpc-XYZ" }) }) })
  }

  expect_failures = [var.pops]
}

# At least one private subnet.
run "pop_aws_subnets" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { aws = merge(var.pops.iad.aws, { private_subnet_ids = [] }) }) })
  }

  expect_failures = [var.pops]
}

# min_size <= max_size <= 100.
run "pop_aws_sizes" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { aws = merge(var.pops.iad.aws, { min_size = 3, max_size = 2 }) }) })
  }

  expect_failures = [var.pops]
}

# traffic_dial from 0 to 100.
run "pop_aws_traffic_dial" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { aws = merge(var.pops.iad.aws, { traffic_dial = 101 }) }) })
  }

  expect_failures = [var.pops]
}

# redis_url is redis:// or rediss://.
run "pop_aws_redis_url" {
  command = plan

  variables {
    pops = merge(var.pops, { iad = merge(var.pops.iad, { aws = merge(var.pops.iad.aws, { redis_url = "http://redis:6379" }) }) })
  }

  expect_failures = [var.pops]
}

