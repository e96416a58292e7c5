import { createServer } from "node:net";

/**
 * A loopback port nothing listens on: bound by the kernel's choice, then
 * released. For a server that must start on a free port (redis-server takes
 * no port 0), and for a target that refuses connections.
 */
export function closedLoopbackPort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
