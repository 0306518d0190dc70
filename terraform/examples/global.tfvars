# Example network: 5 regional clusters and 8 POPs worldwide. fra and iad sit next to a cluster
# (`cluster`) and reach that cluster's Redis over a private link (`aws.redis_url`).
# Addresses are from the documentation ranges (RFC 5737: 192.0.2.0/24, 198.51.100.0/24,
# 203.0.113.0/24); replace them with the addresses you allocated. Secrets are NOT here:
#   export TF_VAR_hint_keys=... TF_VAR_call_id_keys=... TF_VAR_cluster_secret=... TF_VAR_edge_secrets='{}'
#   (and TF_VAR_backbone_keys=... with conference)
# Preview the topology this file produces (offline, no cloud account: terraform/preview):
#   npx node scripts/terraform/render-topology.ts terraform/examples/global.tfvars --pretty

name_prefix     = "gr"
global_vip      = "192.0.2.10:3478"
default_cluster = "fra1"

anycast = {
  byoip           = true
  client_affinity = "SOURCE_IP"
}

edge = {
  account_id         = "0123456789abcdef0123456789abcdef"
  zone_id            = "fedcba9876543210fedcba9876543210"
  worker_name        = "global-relay-edge"
  script_path        = "../dist/edge/index.js"
  compatibility_date = "2026-07-01"
  routes             = ["relay.example.net/v1/*"]
  rate_limit         = { namespace_id = "1001", limit = 600, period = 60 }
  analytics_dataset  = "global_relay"
}

# Conferences (docs/operations/conferences.md): uncomment, and export TF_VAR_backbone_keys (the same
# keyring for every cluster stack). Left out here, so this example plans without that secret.
# conference = {
#   port             = 3480  # UDP, open only to the other clusters' backbone_cidrs
#   max_participants = 8     # the owner's client included, 2-64
#   address          = "pod" # or "node": the node's IP with a hostPort (one transceiver per node)
# }

images = {
  relay       = "ghcr.io/example/global-relay-relay:0.1.0"
  transceiver = "ghcr.io/example/global-relay-transceiver:0.1.0"
  redis       = "redis:7.4-alpine"
}

clusters = {
  fra1 = {
    id             = 1
    region         = "eu-central"
    continent      = "EU"
    countries      = ["DE", "FR", "NL", "BE", "CH", "AT", "PL", "IT", "ES", "GB", "IE", "SE", "DK", "NO"]
    latitude       = 50.11
    longitude      = 8.68
    capacity       = 6000
    signalling_url = "https://fra1.signal.example.net"
    backend_url    = "wss://agent.fra1.example.net/v1/voice"
    backbone       = "198.51.100.10:5100"
    backbone_cidrs = ["198.51.100.0/28"]
    kubernetes = {
      context          = "gke_example_europe-west3_fra1"
      transceivers_min = 4
      transceivers_max = 32
      sessions_per_pod = 200
    }
  }
  iad1 = {
    id             = 2
    region         = "us-east"
    continent      = "NA"
    countries      = ["US", "CA", "MX"]
    latitude       = 38.95
    longitude      = -77.45
    capacity       = 6000
    signalling_url = "https://iad1.signal.example.net"
    backend_url    = "wss://agent.iad1.example.net/v1/voice"
    backbone       = "198.51.100.26:5100"
    backbone_cidrs = ["198.51.100.16/28"]
    kubernetes = {
      context          = "arn:aws:eks:us-east-1:111122223333:cluster/iad1"
      transceivers_min = 4
      transceivers_max = 32
      service_annotations = {
        "service.beta.kubernetes.io/aws-load-balancer-type" = "external"
      }
    }
  }
  sin1 = {
    id             = 3
    region         = "ap-southeast"
    continent      = "AS"
    countries      = ["SG", "MY", "ID", "TH", "VN", "PH", "IN"]
    latitude       = 1.35
    longitude      = 103.82
    capacity       = 3000
    signalling_url = "https://sin1.signal.example.net"
    backend_url    = "wss://agent.sin1.example.net/v1/voice"
    backbone       = "198.51.100.42:5100"
    backbone_cidrs = ["198.51.100.32/28"]
    kubernetes = {
      context          = "sin1"
      transceivers_max = 16
    }
  }
  syd1 = {
    id             = 4
    region         = "ap-southeast-au"
    continent      = "OC"
    countries      = ["AU", "NZ"]
    latitude       = -33.87
    longitude      = 151.21
    capacity       = 2000
    signalling_url = "https://syd1.signal.example.net"
    backend_url    = "wss://agent.syd1.example.net/v1/voice"
    backbone       = "198.51.100.58:5100"
    backbone_cidrs = ["198.51.100.48/28"]
    kubernetes = {
      context          = "syd1"
      transceivers_max = 10
    }
  }
  gru1 = {
    id             = 5
    region         = "sa-east"
    continent      = "SA"
    countries      = ["BR", "AR", "CL", "UY", "PY", "PE", "CO"]
    latitude       = -23.55
    longitude      = -46.63
    capacity       = 2000
    signalling_url = "https://gru1.signal.example.net"
    backend_url    = "wss://agent.gru1.example.net/v1/voice"
    backbone       = "198.51.100.74:5100"
    backbone_cidrs = ["198.51.100.64/28"]
    kubernetes = {
      context          = "gru1"
      transceivers_max = 10
    }
  }
}

pops = {
  fra = {
    id             = 1
    region         = "eu-central-1"
    latitude       = 50.11
    longitude      = 8.68
    backbone       = "203.0.113.10:4478"
    backbone_cidrs = ["203.0.113.0/29"]
    cluster        = "fra1"
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60001"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60011", "subnet-0a1b2c3d4e5f60012"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60021", "subnet-0a1b2c3d4e5f60022"]
      redis_url          = "rediss://redis.fra1.internal.example.net:6380"
    }
  }
  lhr = {
    id             = 2
    region         = "eu-west-2"
    latitude       = 51.47
    longitude      = -0.45
    backbone       = "203.0.113.18:4478"
    backbone_cidrs = ["203.0.113.16/29"]
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60002"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60111", "subnet-0a1b2c3d4e5f60112"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60121", "subnet-0a1b2c3d4e5f60122"]
    }
  }
  iad = {
    id             = 3
    region         = "us-east-1"
    latitude       = 38.95
    longitude      = -77.45
    backbone       = "203.0.113.26:4478"
    backbone_cidrs = ["203.0.113.24/29"]
    cluster        = "iad1"
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60003"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60211", "subnet-0a1b2c3d4e5f60212"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60221", "subnet-0a1b2c3d4e5f60222"]
      redis_url          = "rediss://redis.iad1.internal.example.net:6380"
      instance_type      = "c6in.xlarge"
      min_size           = 3
      max_size           = 8
    }
  }
  sfo = {
    id             = 4
    region         = "us-west-1"
    latitude       = 37.62
    longitude      = -122.38
    backbone       = "203.0.113.34:4478"
    backbone_cidrs = ["203.0.113.32/29"]
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60004"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60311", "subnet-0a1b2c3d4e5f60312"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60321", "subnet-0a1b2c3d4e5f60322"]
    }
  }
  sin = {
    id             = 5
    region         = "ap-southeast-1"
    latitude       = 1.35
    longitude      = 103.82
    backbone       = "203.0.113.42:4478"
    backbone_cidrs = ["203.0.113.40/29"]
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60005"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60411", "subnet-0a1b2c3d4e5f60412"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60421", "subnet-0a1b2c3d4e5f60422"]
    }
  }
  nrt = {
    id             = 6
    region         = "ap-northeast-1"
    latitude       = 35.77
    longitude      = 140.39
    backbone       = "203.0.113.50:4478"
    backbone_cidrs = ["203.0.113.48/29"]
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60006"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60511", "subnet-0a1b2c3d4e5f60512"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60521", "subnet-0a1b2c3d4e5f60522"]
    }
  }
  syd = {
    id             = 7
    region         = "ap-southeast-2"
    latitude       = -33.87
    longitude      = 151.21
    backbone       = "203.0.113.58:4478"
    backbone_cidrs = ["203.0.113.56/29"]
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60007"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60611", "subnet-0a1b2c3d4e5f60612"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60621", "subnet-0a1b2c3d4e5f60622"]
    }
  }
  gru = {
    id             = 8
    region         = "sa-east-1"
    latitude       = -23.43
    longitude      = -46.47
    backbone       = "203.0.113.66:4478"
    backbone_cidrs = ["203.0.113.64/29"]
    aws = {
      vpc_id             = "vpc-0a1b2c3d4e5f60008"
      public_subnet_ids  = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712"]
      private_subnet_ids = ["subnet-0a1b2c3d4e5f60721", "subnet-0a1b2c3d4e5f60722"]
    }
  }
}
