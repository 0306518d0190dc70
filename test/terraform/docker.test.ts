// The container images (static: no Docker daemon or registry here): Node 26 slim, non-root, a
// HEALTHCHECK that really works (run against a local HTTP server), entry points the deployment
// uses, and build contexts that hold what the images copy.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TERRAFORM_DIR } from "../../scripts/terraform/render-topology.ts";

const REPO = join(TERRAFORM_DIR, "..");
const run = promisify(execFile);

interface Dockerfile {
  lines: string[];
  args: Record<string, string>;
  stages: string[][];
}

function readDockerfile(name: string): Dockerfile {
  const text = readFileSync(join(REPO, "regional", name), "utf8").replace(/\\\n\s*/g, " ");
  const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));
  const args: Record<string, string> = {};
  const stages: string[][] = [];
  for (const l of lines) {
    const arg = /^ARG (\w+)=(\S+)/.exec(l);
    if (arg && stages.length === 0) args[arg[1]!] = arg[2]!;
    if (l.startsWith("FROM ")) stages.push([]);
    stages.at(-1)?.push(l);
  }
  return { lines, args, stages };
}

function healthcheck(d: Dockerfile): string[] {
  const line = d.stages.at(-1)!.find((l) => l.startsWith("HEALTHCHECK"))!;
  return JSON.parse(line.slice(line.indexOf("CMD") + 3).trim()) as string[];
}

const IMAGES = [
  {
    file: "Dockerfile.relay",
    program: "regional/relay",
    entry: "regional/relay/main.ts",
    io: "GR_RELAY_IO=batch",
    portEnv: "ADMIN_PORT",
    portValue: (port: number) => String(port),
  },
  {
    file: "Dockerfile.transceiver",
    program: "regional/transceiver",
    entry: "regional/transceiver/main.ts",
    io: "TRANSCEIVER_IO=batch",
    portEnv: "TRANSCEIVER_HTTP",
    portValue: (port: number) => `127.0.0.1:${port}`,
  },
];

let status = 200;
let server: Server;
let port = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    res.statusCode = req.url === "/healthz" ? status : 404;
    res.end(JSON.stringify({ status: "ok" }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe.each(IMAGES)("$file (static)", ({ file, program, entry, io, portEnv, portValue }) => {
  const d = readDockerfile(file);
  const final = d.stages.at(-1)!;

  it("builds from a pinned Node 26 slim image in every stage", () => {
    expect(d.args.NODE_IMAGE).toMatch(/^node:26\.\d+\.\d+-slim$/);
    expect(d.stages.length).toBeGreaterThanOrEqual(2);
    for (const s of d.stages) expect(s[0]).toMatch(/^FROM \$\{NODE_IMAGE\}( AS \w+)?$/);
  });

  it("installs only locked production dependencies, without install scripts", () => {
    const ci = d.lines.find((l) => l.includes("npm ci"))!;
    expect(ci).toContain("--omit=dev");
    expect(ci).toContain("--ignore-scripts");
    expect(d.lines.some((l) => l.includes("npm install"))).toBe(false);
  });

  it("runs as the non-root node user, with a HEALTHCHECK and the program as its command", () => {
    const users = final.filter((l) => l.startsWith("USER "));
    expect(users.at(-1)).toBe("USER node");
    expect(final.findIndex((l) => l.startsWith("USER "))).toBeLessThan(
      final.findIndex((l) => l.startsWith("CMD ")),
    );
    expect(final.some((l) => l.startsWith("HEALTHCHECK "))).toBe(true);
    expect(final.find((l) => l.startsWith("CMD "))).toBe(`CMD ["node", "${entry}"]`);
    expect(final).toContain("STOPSIGNAL SIGTERM");
  });

  it("builds the batched UDP addon in a stage of its own, ships only the module, and requires it", () => {
    const native = d.stages.find((st) => /^FROM \$\{NODE_IMAGE\} AS native$/.test(st[0]!))!;
    expect(native).toBeDefined();
    expect(native.some((l) => /apt-get install .*\bg\+\+/.test(l) && l.includes("python3"))).toBe(true);
    expect(native).toContain(
      "RUN rm -rf regional/common/native/build && node regional/common/native/build.ts --strict",
    );
    expect(final.some((l) => l.includes("apt-get"))).toBe(false);
    expect(final).toContain(
      "COPY --from=native /app/regional/common/native/build/Release/batch_udp.node ./regional/common/native/build/Release/batch_udp.node",
    );
    // Without the module the process refuses to start rather than run on dgram unnoticed.
    expect(final.find((l) => l.startsWith("ENV "))).toContain(io);
    const ignore = readFileSync(join(REPO, "regional", `${file}.dockerignore`), "utf8");
    expect(ignore).toMatch(/^regional\/common\/native\/build$/m);
    expect(existsSync(join(REPO, "regional/common/native/build.ts"))).toBe(true);
  });

  it("copies code that exists, and its .dockerignore lets exactly that through", () => {
    const copies = final
      .filter((l) => l.startsWith("COPY ") && !l.includes("--from="))
      .map((l) => l.split(/\s+/)[1]!);
    expect(copies).toEqual(expect.arrayContaining(["shared", "regional/common", program]));
    const ignore = readFileSync(join(REPO, "regional", `${file}.dockerignore`), "utf8");
    expect(ignore).toMatch(/^\*$/m);
    for (const c of copies) {
      expect(existsSync(join(REPO, c)), c).toBe(true);
      expect(ignore).toMatch(new RegExp(`^!${c.replace(/[.*]/g, "\\$&")}(/\\*\\*)?$`, "m"));
    }
    expect(ignore).toMatch(/^!package-lock\.json$/m);
  });

  it("HEALTHCHECK exits 0 on /healthz 200, 1 on 503 and 1 when nothing listens", async () => {
    const [cmd, ...args] = healthcheck(d);
    expect(cmd).toBe("node");
    const env = { PATH: process.env.PATH ?? "", [portEnv]: portValue(port) };
    status = 200;
    await expect(run(process.execPath, args, { env })).resolves.toBeDefined();
    status = 503;
    await expect(run(process.execPath, args, { env })).rejects.toMatchObject({ code: 1 });
    const closed = { PATH: env.PATH, [portEnv]: portValue(1) };
    await expect(run(process.execPath, args, { env: closed })).rejects.toMatchObject({ code: 1 });
  });
});

describe("the deployment runs what the images contain (static)", () => {
  it("the cluster module starts the transceiver, the gateway and the relay from their image paths", () => {
    const tf = readFileSync(join(TERRAFORM_DIR, "modules", "cluster", "main.tf"), "utf8");
    expect(tf).toContain("exec node regional/transceiver/main.ts");
    expect(tf).toContain('command = ["node", "regional/gateway/main.ts"]');
    // The relay Deployment uses the image's own CMD (regional/relay/main.ts).
    const relay = tf.slice(tf.indexOf('resource "kubernetes_deployment_v1" "relay"'));
    expect(relay.slice(0, relay.indexOf("\n}\n"))).not.toMatch(/\bcommand\s*=\s*\["node"/);
    // Pods run as the image's user: uid 1000 is `node` in the official images.
    expect(tf).toMatch(/run_as_user\s+= 1000/);
  });
});
