# The topology this module renders: exact bytes for a small network, and how each input shows up.
# Every run plans only (nothing to create: the module has no resources).

variables {
  global_vip      = "192.0.2.1:3478"
  default_cluster = "b1"
  clusters = {
    b1 = {
      id             = 2, region = "eu-b", continent = "EU", latitude = 50.5, longitude = 8, capacity = 100
      signalling_url = "https://b1.example.net", backend_url = "wss://a.example.net"
      backbone       = "198.51.100.2:5100", backbone_cidrs = ["198.51.100.0/28"], vip = "198.51.100.3:3478"
      kubernetes     = { context = "b" }
    }
    a1 = {
      id         = 1, region = "us-a", continent = "NA", countries = ["US"], latitude = 38.9, longitude = -77.04
      capacity   = "200", signalling_url = "https://a1.example.net", backend_url = "ws://a.example.net"
      backbone   = "198.51.100.18:5100", backbone_cidrs = ["198.51.100.16/28", "2001:db8::/48"]
      kubernetes = { context = "a" }
    }
  }
  pops = {
    zz = {
      id       = 9, region = "us-east-1", latitude = 38.9, longitude = -77.04, cluster = "a1"
      backbone = "203.0.113.1:4478", backbone_cidrs = ["203.0.113.0/29"]
      aws      = { vpc_id = "vpc-1", public_subnet_ids = ["subnet-1"], private_subnet_ids = ["subnet-2"], redis_url = "redis://10.0.0.5:6379" }
    }
    aa = {
      id       = 3, region = "eu-central-1", latitude = 0.0000001, longitude = 8, vip = "192.0.2.7:3478"
      backbone = "[2001:db8::9]:4478", backbone_cidrs = ["2001:db8:1::/48"]
      aws      = { vpc_id = "vpc-2", public_subnet_ids = ["subnet-3"], private_subnet_ids = ["subnet-4"] }
    }
  }
}

run "renders_the_exact_json" {
  command = plan

  # Map keys in lexical order (a1 before b1, aa before zz), object keys sorted, no whitespace,
  # optional fields absent (not null), "200" converted to a number, a POP's vip defaulting to
  # global_vip, clusterId only for a POP with a cluster.
  assert {
    condition     = output.topology_json == "{\"clusters\":[{\"backbone\":\"198.51.100.18:5100\",\"backboneCidrs\":[\"198.51.100.16/28\",\"2001:db8::/48\"],\"capacity\":200,\"continent\":\"NA\",\"countries\":[\"US\"],\"id\":1,\"latitude\":38.9,\"longitude\":-77.04,\"name\":\"a1\",\"region\":\"us-a\",\"signallingUrl\":\"https://a1.example.net\"},{\"backbone\":\"198.51.100.2:5100\",\"backboneCidrs\":[\"198.51.100.0/28\"],\"capacity\":100,\"continent\":\"EU\",\"countries\":[],\"id\":2,\"latitude\":50.5,\"longitude\":8,\"name\":\"b1\",\"region\":\"eu-b\",\"signallingUrl\":\"https://b1.example.net\",\"vip\":\"198.51.100.3:3478\"}],\"defaultClusterId\":2,\"globalVip\":\"192.0.2.1:3478\",\"pops\":[{\"backbone\":\"[2001:db8::9]:4478\",\"backboneCidrs\":[\"2001:db8:1::/48\"],\"id\":3,\"latitude\":0.0000001,\"longitude\":8,\"name\":\"aa\",\"region\":\"eu-central-1\",\"vip\":\"192.0.2.7:3478\"},{\"backbone\":\"203.0.113.1:4478\",\"backboneCidrs\":[\"203.0.113.0/29\"],\"clusterId\":1,\"id\":9,\"latitude\":38.9,\"longitude\":-77.04,\"name\":\"zz\",\"region\":\"us-east-1\",\"vip\":\"192.0.2.1:3478\"}],\"version\":1}"
    error_message = "topology_json is not the expected JSON: ${output.topology_json}"
  }
}

run "vip_tcp_port_turns_on_ice_tcp" {
  command = plan

  variables {
    vip_tcp_port = 443
  }

  # The answer's passive TCP candidate and every POP's listener use the one port.
  assert {
    condition     = jsondecode(output.topology_json).globalVipTcpPort == 443 && alltrue([for p in jsondecode(output.topology_json).pops : p.vipTcpPort == 443])
    error_message = "vip_tcp_port did not reach globalVipTcpPort and every pops[].vipTcpPort: ${output.topology_json}"
  }
}
