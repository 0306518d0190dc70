{
  "targets": [
    {
      "target_name": "batch_udp",
      "sources": ["batch_udp.c", "mmsg.c", "gso.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "conditions": [["OS!='linux'", {"type": "none"}]]
    }
  ]
}
