// The regional services' metrics are shared/metrics (one registry for every component).
export * from "../../shared/metrics/registry.ts";
