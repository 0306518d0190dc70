terraform {
  # Remote state, partially configured so no account detail lives here:
  #   terraform init -backend-config=backend.hcl
  # with bucket, key, region, encrypt = true, kms_key_id and use_lockfile = true (S3 locking).
  # The state holds secrets (Worker secret bindings, the SSM parameters' values, the Kubernetes
  # Secret): keep the bucket encrypted with a KMS key and readable only by the deployers.
  # One state per workspace: "global" and "cluster-<key>" (see main.tf and docs/operations/deploy.md).
  backend "s3" {}
}
