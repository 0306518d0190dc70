terraform {
  # 1.9: input validation rules may refer to other variables (pops[*].cluster -> clusters).
  # No provider: this module runs offline (terraform test, the topology preview).
  required_version = ">= 1.9.0, < 2.0.0"
}
