output "summary" {
  description = "Namespace and the two public Services of the cluster."
  value = {
    cluster_id       = var.cluster_id
    namespace        = local.ns
    backbone_service = kubernetes_service_v1.backbone.metadata[0].name
    backbone         = var.backbone
    signalling       = kubernetes_service_v1.gateway.metadata[0].name
    signalling_port  = local.signal_port
    # Conferences: the UDP port and the networks it accepts (for a cloud firewall in front of the
    # nodes, which this module does not manage), or null.
    conference = local.conference_on ? {
      port       = var.conference.port
      address    = var.conference.address
      peer_cidrs = var.conference_peer_cidrs
    } : null
  }
}
