# conference and backbone_keys (variables.tf): the defaults, one run per validation that breaks
# only that rule, and the misspelt-attribute check. backbone_keys is a secret like the others
# (shown as sensitive in a message; root.test.ts checks it never appears in Terraform's output).

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
    transceiver = "ghcr.io/example/global-relay-transceiver:0.1.0"
  }
  # Test values only (32 bytes of ASCII digits); real keys come from TF_VAR_* (docs/operations/deploy.md).
  hint_keys      = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  call_id_keys   = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  cluster_secret = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  edge_secrets   = {}
  conference     = {}
  backbone_keys  = "2:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=,1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
}

# An empty conference object takes every default.
run "conference_defaults" {
  command = plan

  assert {
    condition     = output.conference == { port = 3480, max_participants = 8, nack = true, address = "pod" }
    error_message = "conference defaults"
  }
}

# No conference and no keyring: conferences off (the global stack, or a cluster without them).
run "conference_off" {
  command = plan

  variables {
    conference    = null
    backbone_keys = null
  }

  assert {
    condition     = output.conference == null
    error_message = "conference off"
  }
}

# The edges of the ranges pass.
run "conference_edges" {
  command = plan

  variables {
    conference = { port = 65535, max_participants = 64, nack = false, address = "node" }
  }

  assert {
    condition     = output.conference.port == 65535 && output.conference.max_participants == 64 && output.conference.address == "node"
    error_message = "edges"
  }
}

# conference.port: 1024-65535 (no privileges to bind below).
run "conference_port_low" {
  command = plan

  variables {
    conference = { port = 443 }
  }

  expect_failures = [var.conference]
}

# conference.port: not the transceiver's backbone port.
run "conference_port_backbone" {
  command = plan

  variables {
    conference = { port = 3479 }
  }

  expect_failures = [var.conference]
}

# conference.max_participants: 2-64.
run "conference_max_participants_one" {
  command = plan

  variables {
    conference = { max_participants = 1 }
  }

  expect_failures = [var.conference]
}

run "conference_max_participants_high" {
  command = plan

  variables {
    conference = { max_participants = 65 }
  }

  expect_failures = [var.conference]
}

# conference.address: pod or node.
run "conference_address" {
  command = plan

  variables {
    conference = { address = "service" }
  }

  expect_failures = [var.conference]
}

# conference without the keyring.
run "conference_without_keys" {
  command = plan

  variables {
    backbone_keys = null
  }

  expect_failures = [var.conference]
}

# A keyring without conference is allowed (set it everywhere first, then turn conferences on).
run "backbone_keys_without_conference" {
  command = plan

  variables {
    conference = null
  }
}

# backbone_keys ids are 0-15 (byte 3 of a conference frame).
run "backbone_keys_id" {
  command = plan

  variables {
    backbone_keys = "16:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }

  expect_failures = [var.backbone_keys]
}

# backbone_keys secrets are at least 32 bytes.
run "backbone_keys_short" {
  command = plan

  variables {
    backbone_keys = "1:c2hvcnQ="
  }

  expect_failures = [var.backbone_keys]
}

# backbone_keys lists each key id once.
run "backbone_keys_repeated_id" {
  command = plan

  variables {
    backbone_keys = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=,1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }

  expect_failures = [var.backbone_keys]
}

# A misspelt conference attribute is an error, not a silent default.
run "as_written_conference_misspelt" {
  command = plan

  variables {
    conference = { max_participant = 4 }
    as_written = { anycast = null, edge = var.edge, images = var.images, conference = { max_participant = 4 } }
  }

  expect_failures = [var.as_written]
}
