import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Integration tests bind real sockets and start real servers; keep parallelism modest on 2 cores.
    maxWorkers: 2,
  },
});
