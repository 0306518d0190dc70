# Every validation of the secrets (variables.tf): one run each that breaks only that rule.
# Terraform shows these variables' values as sensitive in the messages (root.test.ts checks that
# a refused secret never appears in Terraform's output).

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
  cluster_secret = "2:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=,1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  edge_secrets   = { API_KEY_HASHES = "x", METRICS_TOKEN = "y" }
}

# hint_keys ids are 0-15.
run "hint_keys_id" {
  command = plan

  variables {
    hint_keys = "16:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }

  expect_failures = [var.hint_keys]
}

# hint_keys secrets are at least 32 bytes.
run "hint_keys_short" {
  command = plan

  variables {
    hint_keys = "1:c2hvcnQ="
  }

  expect_failures = [var.hint_keys]
}

# call_id_keys is id:base64[,id:base64].
run "call_id_keys_format" {
  command = plan

  variables {
    call_id_keys = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }

  expect_failures = [var.call_id_keys]
}

# cluster_secret is at least 32 bytes.
run "cluster_secret_short" {
  command = plan

  variables {
    cluster_secret = "c2hvcnQ="
  }

  expect_failures = [var.cluster_secret]
}

# cluster_secret keyring secrets are at least 32 bytes too.
run "cluster_secret_keyring_short" {
  command = plan

  variables {
    cluster_secret = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=,2:c2hvcnQ="
  }

  expect_failures = [var.cluster_secret]
}

# cluster_secret key ids are 0-255.
run "cluster_secret_id" {
  command = plan

  variables {
    cluster_secret = "256:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }

  expect_failures = [var.cluster_secret]
}

# cluster_secret lists each key id once.
run "cluster_secret_repeated_id" {
  command = plan

  variables {
    cluster_secret = "1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=,1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }

  expect_failures = [var.cluster_secret]
}

# The older one-secret form is still accepted (read as key id 0).
run "cluster_secret_single" {
  command = plan

  variables {
    cluster_secret = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="
  }
}

# edge_secrets may not reuse a binding the edge module sets.
run "edge_secrets_reserved" {
  command = plan

  variables {
    edge_secrets = { TOPOLOGY = "x" }
  }

  expect_failures = [var.edge_secrets]
}

# edge_secrets names are upper-case.
run "edge_secrets_name" {
  command = plan

  variables {
    edge_secrets = { api_key_hashes = "x" }
  }

  expect_failures = [var.edge_secrets]
}
