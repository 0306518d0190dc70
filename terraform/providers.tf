# Credentials come from the environment of whoever runs Terraform, never from this repository:
# AWS_PROFILE / AWS_* for AWS, CLOUDFLARE_API_TOKEN for Cloudflare, a kubeconfig for Kubernetes.

provider "aws" {
  # Global Accelerator's API lives in us-west-2. Every regional resource in modules/pop sets its own
  # `region` (AWS provider 6), so one provider configuration serves every POP: adding a POP needs no
  # new provider block.
  region = "us-west-2"
  default_tags {
    tags = {
      "global-relay:stack" = module.settings.name_prefix
      "managed-by"         = "terraform"
    }
  }
}

provider "cloudflare" {}

provider "kubernetes" {
  # Only the cluster stack (deploy_cluster set) talks to Kubernetes; the global stack leaves the
  # provider unconfigured and creates nothing through it.
  config_path    = local.deploy_cluster == null ? null : pathexpand(module.settings.kubeconfig_path)
  config_context = try(local.clusters[local.deploy_cluster].kubernetes.context, null)
}
