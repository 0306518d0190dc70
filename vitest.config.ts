import { configDefaults, defineConfig } from "vitest/config";

// The relay's suites that open sockets run on both datagram paths (GR_RELAY_IO): the batched one
// (native addon, recvmmsg/sendmmsg) and Node's dgram; the relay's other suites run once.
const RELAY = ["test/relay/**/*.test.ts"];
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
        },
      },
      {
        extends: true,
        test: {
          name: "relay-batch",
          include: RELAY,
          env: { GR_RELAY_IO: "batch" },
          globalSetup: ["test/relay/native-setup.ts"],
        },
      },
      { extends: true, test: { name: "relay-dgram", include: RELAY_SOCKETS, env: { GR_RELAY_IO: "dgram" } } },
    ],
  },
});
