terraform {
  # 1.9: input validation rules may refer to other variables (pops[*].cluster -> clusters).
  required_version = ">= 1.9.0, < 2.0.0"

  # Pinned to a major line with a floor; `terraform init` writes the exact versions and hashes to
  # .terraform.lock.hcl, which is committed next to this file (see docs/operations/deploy.md).
  required_providers {
    aws = {
      # 6.x: every regional resource takes its own `region`, so one provider serves every POP.
      source  = "hashicorp/aws"
      version = "~> 6.14"
    }
    cloudflare = {
      # 5.x: `cloudflare_workers_script` with a `bindings` list (kv, secret_text, ratelimit, analytics_engine).
      source  = "cloudflare/cloudflare"
      version = "~> 5.10"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 2.38"
    }
  }
}
