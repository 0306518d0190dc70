variable "account_id" {
  description = "Cloudflare account id."
  type        = string
}

variable "zone_id" {
  description = "Cloudflare zone id of the routes and the custom domain."
  type        = string
}

variable "worker_name" {
  description = "Name of the Worker script."
  type        = string
}

variable "script_path" {
  description = "Path of the bundled Worker module (wrangler build output)."
  type        = string
}

variable "compatibility_date" {
  description = "Workers compatibility date (YYYY-MM-DD), the same as wrangler.toml."
  type        = string
}

variable "compatibility_flags" {
  description = "Workers compatibility flags, the same as wrangler.toml."
  type        = list(string)
}

variable "routes" {
  description = "Zone route patterns served by the Worker, e.g. \"relay.example.com/v1/*\"."
  type        = list(string)
}

variable "custom_domain" {
  description = "Optional hostname the Worker serves as a custom domain (null for none)."
  type        = string
}

variable "rate_limit" {
  description = "Workers rate-limit binding: namespace id, requests allowed per period, period in seconds (10 or 60)."
  type = object({
    namespace_id = string
    limit        = number
    period       = number
  })
}

variable "analytics_dataset" {
  description = "Analytics Engine dataset the Worker writes signalling timings to."
  type        = string
}

variable "topology_json" {
  description = "The rendered topology JSON (modules/topology)."
  type        = string
}

variable "cluster_secret" {
  description = "GR_CLUSTER_SECRET: signs every edge-to-cluster request."
  type        = string
  sensitive   = true
}

variable "call_id_keys" {
  description = "GR_CALL_ID_KEYS: verifies call ids so follow-up requests route without state."
  type        = string
  sensitive   = true
}

variable "extra_secrets" {
  description = "Further secret_text bindings by name."
  type        = map(string)
  sensitive   = true
}
