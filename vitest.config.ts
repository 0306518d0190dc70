import { configDefaults, defineConfig } from "vitest/config";

// The relay's suites that open sockets run on both datagram paths (GR_RELAY_IO): the batched one
// (native addon, recvmmsg/sendmmsg) and Node's dgram; the relay's other suites run once. The
// transceiver's backbone socket likewise (TRANSCEIVER_IO): every suite on the batched path, and
// the ones that exercise its socket (media, lifecycle, the real relay, hostile input) on dgram too.
const RELAY = ["test/relay/**/*.test.ts"];
const TRANSCEIVER_SOCKETS = [
  "test/transceiver/media.test.ts",
  "test/transceiver/lifecycle.test.ts",
  "test/transceiver/real-relay.test.ts",
  "test/transceiver/backbone-io.test.ts",
  "test/security/replayed-checks.test.ts",
];
const RELAY_SOCKETS = [
  "test/relay/hostile.test.ts",
  "test/relay/loopback.test.ts",
  "test/relay/process.test.ts",
  "test/relay/restart-redis.test.ts",
  "test/relay/config-and-admin.test.ts",
  "test/relay/transceiver-return.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Integration tests bind real sockets and start real servers; keep parallelism modest on 2 cores.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...RELAY],
          env: { TRANSCEIVER_IO: "batch" },
          globalSetup: ["test/support/native-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "relay-batch",
          include: RELAY,
          env: { GR_RELAY_IO: "batch" },
          globalSetup: ["test/support/native-setup.ts"],
        },
      },
      { extends: true, test: { name: "relay-dgram", include: RELAY_SOCKETS, env: { GR_RELAY_IO: "dgram" } } },
      {
        extends: true,
        test: { name: "transceiver-dgram", include: TRANSCEIVER_SOCKETS, env: { TRANSCEIVER_IO: "dgram" } },
      },
    ],
  },
});
