/**
 * Motion Runner's record for Pi (loaded with `pi -e` when the turn's policy carries the record
 * server: motion_runner/harnesses/pi.py). Pi has no MCP client by design; this is the smallest
 * one: it starts each of the turn's MCP servers (MOTION_RUNNER_TURN_SERVERS, a JSON object
 * name -> {command, args, env}, the same launch Claude Code and Codex get in their generated
 * config), asks it for its tools, and registers each as a Pi tool named as Claude Code names it,
 * `mcp__<server>__<tool>` (so the record's `read` never shadows Pi's own `read`), with the
 * server's own description and input schema. A call is sent to the server over MCP (JSON-RPC,
 * one JSON object a line on stdio) and its answer is the tool's result; an MCP error result
 * (a call refused after its turn ended, bad input) is thrown, so Pi marks the step an error.
 * The server applies the pass rules and redacts its answers (motion_runner/recall): nothing is
 * decided here.
 *
 * A server named by URL (`{type: "http", url, headers}`: the deployment's record server, up for
 * every turn, with the turn's pass as its bearer token) is spoken to over MCP's streamable HTTP
 * instead (one POST a request, its answer JSON or an event stream): nothing is started.
 *
 * Pi's `--tools` (a look-only turn's exact allowlist) decides which of these the model is
 * offered; on a full turn every one is.
 */

import { spawn, type ChildProcess } from "node:child_process";

const PROTOCOL_VERSION = "2025-06-18";
const START_TIMEOUT_MS = 60_000; // Django and the MCP SDK start in a few seconds on a busy host
const CALL_TIMEOUT_MS = 120_000;
const STDERR_KEPT = 2_000;

type Pending = { resolve: (value: any) => void; reject: (error: Error) => void };

class McpServer {
  private child: ChildProcess;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private buffer = "";
  private stderr = "";
  private exited: string | null = null;

  constructor(
    readonly name: string,
    config: { command: string; args?: string[]; env?: Record<string, string> },
  ) {
    this.child = spawn(config.command, config.args ?? [], {
      env: { ...process.env, ...(config.env ?? {}) },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (chunk: string) => this.received(chunk));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_KEPT);
    });
    this.child.stdin!.on("error", () => undefined); // a server gone: its calls are rejected below
    this.child.on("error", (error) => this.gone(`could not start: ${error.message}`));
    // "close", not "exit": an answer still in the pipe when the server exits is read first.
    this.child.on("close", (code, signal) => this.gone(`stopped (${signal ?? `exit ${code}`})`));
    // Pi ends its run without exiting its process: an idle server never keeps it alive (its
    // stdin closes with Pi, and the server stops); one that owes an answer does.
    this.hold();
  }

  private hold(): void {
    const busy = this.pending.size > 0;
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as any[]) {
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  private gone(why: string): void {
    if (this.exited) return;
    const said = this.stderr.trim();
    this.exited = `${this.name}: ${why}${said ? `: ${said}` : ""}`;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of waiting) reject(new Error(this.exited));
    this.hold();
  }

  private received(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end + 1);
      if (!line) continue;
      let message: any;
      try {
        message = JSON.parse(line);
      } catch {
        continue; // not protocol: ignored, as MCP clients do
      }
      this.dispatch(message);
    }
  }

  private dispatch(message: any): void {
    if (message.method !== undefined) {
      // A request from the server (ping, or one this client does not offer): answered.
      if (message.id === undefined) return;
      const reply =
        message.method === "ping"
          ? { jsonrpc: "2.0", id: message.id, result: {} }
          : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not offered" } };
      this.write(reply);
      return;
    }
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    this.hold();
    if (message.error) waiting.reject(new Error(`${this.name}: ${message.error.message ?? "error"}`));
    else waiting.resolve(message.result);
  }

  private write(message: object): void {
    this.child.stdin!.write(JSON.stringify(message) + "\n");
  }

  request(method: string, params: object, timeoutMs: number, signal?: AbortSignal): Promise<any> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    if (signal?.aborted) return Promise.reject(new Error(`${this.name}: cancelled`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
      };
      const fail = (why: string) => {
        if (!this.pending.delete(id)) return;
        this.hold();
        done();
        this.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: why } });
        reject(new Error(`${this.name}: ${why}`));
      };
      const aborted = () => fail("cancelled");
      const timer = setTimeout(() => fail(`no answer to ${method} in ${timeoutMs / 1000} s`), timeoutMs);
      timer.unref();
      signal?.addEventListener("abort", aborted, { once: true });
      this.pending.set(id, {
        resolve: (value) => (done(), resolve(value)),
        reject: (error) => (done(), reject(error)),
      });
      this.hold();
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  async start(): Promise<any[]> {
    await this.request(
      "initialize",
      {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "motion-runner-pi", version: "1" },
      },
      START_TIMEOUT_MS,
    );
    this.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    const tools: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.request("tools/list", cursor ? { cursor } : {}, START_TIMEOUT_MS);
      tools.push(...(page?.tools ?? []));
      cursor = page?.nextCursor;
    } while (cursor);
    return tools;
  }

  stop(): void {
    this.child.stdin?.end();
    if (!this.exited) this.child.kill("SIGTERM");
  }
}

/** A server the deployment runs already, over MCP's streamable HTTP (the same calls as above). */
class HttpMcpServer {
  private nextId = 1;
  private session: string | null = null;
  private protocol: string | null = null;

  constructor(
    readonly name: string,
    private config: { url: string; headers?: Record<string, string> },
  ) {}

  private async post(message: object, timeoutMs: number, signal?: AbortSignal): Promise<any> {
    const headers: Record<string, string> = {
      ...(this.config.headers ?? {}),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (this.session) headers["mcp-session-id"] = this.session;
    if (this.protocol) headers["mcp-protocol-version"] = this.protocol;
    const timeout = AbortSignal.timeout(timeoutMs);
    const response = await fetch(this.config.url, {
      method: "POST",
      headers,
      body: JSON.stringify(message),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    }).catch((error: any) => {
      throw new Error(`${this.name}: ${signal?.aborted ? "cancelled" : `unreachable (${error?.message ?? error})`}`);
    });
    this.session = response.headers.get("mcp-session-id") ?? this.session;
    const text = await response.text();
    if (!response.ok) {
      let said = text;
      try {
        said = JSON.parse(text)?.error?.message ?? JSON.parse(text)?.error ?? text;
      } catch {}
      throw new Error(`${this.name}: refused (${response.status}): ${String(said).slice(0, STDERR_KEPT)}`);
    }
    if (!("id" in message)) return null; // a notification: 202, nothing to read
    const type = response.headers.get("content-type") ?? "";
    const bodies = type.includes("text/event-stream")
      ? text
          .split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trim())
      : [text];
    for (const body of bodies) {
      let parsed: any;
      try {
        parsed = JSON.parse(body);
      } catch {
        continue;
      }
      if (parsed?.id !== (message as any).id) continue;
      if (parsed.error) throw new Error(`${this.name}: ${parsed.error.message ?? "error"}`);
      return parsed.result;
    }
    throw new Error(`${this.name}: no answer in the server's reply`);
  }

  request(method: string, params: object, timeoutMs: number, signal?: AbortSignal): Promise<any> {
    return this.post({ jsonrpc: "2.0", id: this.nextId++, method, params }, timeoutMs, signal);
  }

  async start(): Promise<any[]> {
    const init = await this.request(
      "initialize",
      {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "motion-runner-pi", version: "1" },
      },
      START_TIMEOUT_MS,
    );
    this.protocol = init?.protocolVersion ?? PROTOCOL_VERSION;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" }, START_TIMEOUT_MS);
    const tools: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.request("tools/list", cursor ? { cursor } : {}, START_TIMEOUT_MS);
      tools.push(...(page?.tools ?? []));
      cursor = page?.nextCursor;
    } while (cursor);
    return tools;
  }

  stop(): void {}
}

/** An MCP tool result as Pi's: text stays text, anything else is shown as its JSON. */
function piContent(result: any): { type: "text"; text: string }[] {
  const content = Array.isArray(result?.content) ? result.content : [];
  return content.map((item: any) =>
    item?.type === "text" ? { type: "text", text: String(item.text ?? "") } : { type: "text", text: JSON.stringify(item) },
  );
}

function turnServers(): Record<string, any> {
  try {
    const servers = JSON.parse(process.env.MOTION_RUNNER_TURN_SERVERS || "{}");
    // Read once, then out of the environment Pi's own tools (its bash) hand their commands: an
    // HTTP server's entry holds the turn's pass.
    delete process.env.MOTION_RUNNER_TURN_SERVERS;
    return servers && typeof servers === "object" && !Array.isArray(servers) ? servers : {};
  } catch {
    return {};
  }
}

export default async function (pi: any) {
  const started: (McpServer | HttpMcpServer)[] = [];
  for (const [name, config] of Object.entries(turnServers())) {
    const server = config?.type === "http" ? new HttpMcpServer(name, config) : new McpServer(name, config);
    let tools: any[];
    try {
      tools = await server.start();
    } catch (error: any) {
      // A server that will not start (its turn ended already) gives the turn no tools of its own.
      console.error(`motion-runner: ${error?.message ?? error}`);
      server.stop();
      continue;
    }
    started.push(server);
    for (const tool of tools) {
      const description = String(tool.description ?? "");
      pi.registerTool({
        name: `mcp__${name}__${tool.name}`,
        label: `${name} ${tool.name}`,
        description,
        promptSnippet: description,
        parameters: tool.inputSchema ?? { type: "object", properties: {} },
        async execute(_callId: string, params: any, signal?: AbortSignal) {
          const result = await server.request(
            "tools/call",
            { name: tool.name, arguments: params ?? {} },
            CALL_TIMEOUT_MS,
            signal,
          );
          const content = piContent(result);
          if (result?.isError) throw new Error(content.map((item) => item.text).join("\n") || "the tool failed");
          return { content, details: {} };
        },
      });
    }
  }
  pi.on("session_shutdown", async () => {
    for (const server of started) server.stop();
  });
}
