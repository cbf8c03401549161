/**
 * Motion Runner's read guard for Pi (loaded with `pi -e` on every wake; wakes/tool_policy.py).
 *
 * Pi's read, grep, find and ls take any path: without this a look-only Pi turn could read
 * ~/.ssh or any file on the machine (checked with pi 0.73.1, tests/test_e2e_wake_modes.py).
 * This blocks, before the tool runs (Pi's `tool_call` event; a block becomes the tool's error
 * result):
 *   - on look-only turns (MOTION_RUNNER_CONFINE_READS=1), any path whose real location (through
 *     symlinks and "..") is outside the working directory, as Claude Code's --restricted does;
 *   - on every turn, the shared list's secret paths (MOTION_RUNNER_DENIED_PATHS, a JSON list of
 *     globs: "**" any depth, "*" within a name, "~/" the home directory).
 * Paths are resolved the way Pi's tools resolve them (a leading "@" dropped, "~" expanded,
 * relative to the working directory), so the guard sees what the tool would open.
 */

import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";

const READ_TOOLS = new Set(["read", "grep", "find", "ls"]);

function expand(raw: string): string {
  const path = raw.startsWith("@") ? raw.slice(1) : raw;
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return homedir() + path.slice(1);
  return path;
}

/** The real path, through symlinks; for a path that does not exist, its nearest existing
 * ancestor's real path with the rest appended (nothing there can be read anyway). */
function realLocation(path: string): string {
  let head = path;
  const rest: string[] = [];
  while (!existsSync(head) && dirname(head) !== head) {
    rest.unshift(basename(head));
    head = dirname(head);
  }
  let real = head;
  try {
    real = realpathSync(head);
  } catch {
    // unreadable: judged by the resolved path
  }
  return rest.length ? join(real, ...rest) : real;
}

function globToRegExp(glob: string): RegExp {
  const pattern = expand(glob);
  let out = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (pattern.startsWith("**/", i)) {
      out += "(?:.*/)?"; // any depth, none included
      i += 2;
    } else if (pattern.startsWith("**", i)) {
      out += ".*";
      i += 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(out + "$");
}

function deniedPatterns(): RegExp[] {
  try {
    const list = JSON.parse(process.env.MOTION_RUNNER_DENIED_PATHS || "[]");
    return Array.isArray(list) ? list.map((g: string) => globToRegExp(String(g))) : [];
  } catch {
    return [];
  }
}

export default function (pi: any) {
  const confine = process.env.MOTION_RUNNER_CONFINE_READS === "1";
  const denied = deniedPatterns();

  pi.on("tool_call", async (event: any, ctx: any) => {
    if (!READ_TOOLS.has(event.toolName)) return undefined;
    const cwd: string = ctx?.cwd || process.cwd();
    const raw = typeof event.input?.path === "string" && event.input.path ? event.input.path : ".";
    const expanded = expand(raw);
    const target = realLocation(isAbsolute(expanded) ? expanded : resolve(cwd, expanded));
    if (denied.some((re) => re.test(target))) {
      return { block: true, reason: `${raw} is a secret path: no turn reads it.` };
    }
    if (confine) {
      const root = realLocation(cwd);
      if (target !== root && !target.startsWith(root.endsWith(sep) ? root : root + sep)) {
        return {
          block: true,
          reason: `${raw} is outside this Motion's workspace (${root}): a look-only turn reads only there.`,
        };
      }
    }
    return undefined;
  });
}
