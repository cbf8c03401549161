"""Codex: `codex exec --json --skip-git-repo-check -s MODE [-m MODEL] [resume THREAD] -- PROMPT`.

Line types (checked against recordings from codex-cli 0.171 in tests/recordings/codex/):
`thread.started` (thread_id: the session), `turn.started`, `item.started|updated|completed`
(item types agent_message, reasoning, command_execution, file_change, mcp_tool_call,
web_search, todo_list, error), `turn.completed` (usage), `turn.failed` (error.message) and a
top-level `error` (message), which Codex prints for every retry ("Reconnecting... 1/5 (…)")
and once more just before `turn.failed`: it only moves the activity line.

What the recordings showed that matters here:
- Items carry no uuid, and their ids restart at `item_0` in every `exec` run of a thread, so
  Message ids are derived from (thread id, the runner's Turn, item id, role): a replayed line
  maps to the same Message, and a resumed run never collides with an earlier one.
- `turn.completed` usage is the THREAD's running total, not the turn's: a resumed run reports
  the earlier runs' tokens plus its own. The turn's own usage is that total minus the total
  at the end of the thread's previous turn (read from its turn-end Message).
- No dollars and no model name in the stream: the cost is priced from usage with
  motion_runner/harnesses/pricing.py for the agent's model (or the `model` in its CODEX_HOME config).
- A model error ends with `turn.failed` (exit code 1); an in-band stream failure is retried
  (top-level `error` lines), then `turn.failed` (exit code 0 or 1). An unreachable server is
  retried with no end: the runner's turn timeout stops it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..lib.ids import stable_uuid
from . import pricing, register
from .base import (
    Event,
    EventKind,
    HarnessAdapter,
    HarnessError,
    LaunchSpec,
    RecordedEnds,
    StreamParser,
    no_recorded_ends,
    turn_workspace,
)
from .env import harness_environment
from .policy import ToolPolicy

HARNESS = "codex"
TOOL_ITEMS = {"command_execution", "file_change", "mcp_tool_call", "web_search"}
ACTIVITY_FOR_ITEM = {
    "reasoning": "thinking…",
    "agent_message": "writing…",
    "todo_list": "updating its plan…",
}


def _int(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return int(value) if isinstance(value, (int, float)) else 0


def turn_usage(total: dict[str, Any], baseline: dict[str, Any] | None) -> dict[str, Any]:
    """The turn's own tokens, in the Message columns' meaning (input_tokens excludes cache
    reads, as in Anthropic's usage), from Codex's thread totals before and after the turn."""
    before = baseline or {}

    def delta(key: str) -> int:
        return max(0, _int(total, key) - _int(before, key))

    cached = delta("cached_input_tokens")
    return {
        "input_tokens": max(0, delta("input_tokens") - cached),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": delta("cache_write_input_tokens"),
        "output_tokens": delta("output_tokens"),
        "reasoning_output_tokens": delta("reasoning_output_tokens"),
        "thread_total": dict(total),
    }


def _mcp_result_text(item: dict[str, Any]) -> str:
    error = item.get("error")
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    result = item.get("result")
    if not isinstance(result, dict):
        return ""
    parts = []
    for block in result.get("content") or []:
        if isinstance(block, dict):
            parts.append(str(block.get("text") or f"[{block.get('type', 'content')}]"))
    if not parts and result.get("structured_content") is not None:
        parts.append(str(result["structured_content"]))
    return "\n".join(parts)


class CodexParser(StreamParser):
    def __init__(
        self,
        session_id: str = "",
        *,
        turn_key: str = "",
        model: str = "",
        baseline: dict[str, Any] | None = None,
    ):
        super().__init__(session_id)
        # Scopes derived ids to one run of the thread (the runner's Turn pk). Without one
        # (a batch posted from elsewhere), runs are told apart by counting turn.started.
        self.turn_key = turn_key
        self.model = model
        self.baseline = baseline
        self.runs = 0
        self.called: set[str] = set()
        self.ended = False
        self.last_error = ""

    # -- ids ---------------------------------------------------------------------------------

    def _scope(self) -> str:
        return self.turn_key or f"run{self.runs}"

    def _uuid(self, *parts: object) -> str:
        return stable_uuid(HARNESS, self.session_id, self._scope(), *parts)

    # -- lines -------------------------------------------------------------------------------

    def feed(self, line: dict[str, Any]) -> list[Event]:
        kind = line.get("type")
        if kind == "thread.started":
            self.session_id = str(line.get("thread_id") or self.session_id)
            return [Event(EventKind.INIT, session_id=self.session_id, model=self.model, raw=line)]
        if kind == "turn.started":
            self.runs += 1
            return [Event(EventKind.ACTIVITY, session_id=self.session_id, text="thinking…")]
        if kind in ("item.started", "item.updated", "item.completed"):
            item = line.get("item")
            if not isinstance(item, dict):
                return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]
            return self._item(kind, item, line)
        if kind == "turn.completed":
            return [self._completed(line)]
        if kind == "turn.failed":
            return [self._failed(line)]
        if kind == "error":
            # Retry noise ("Reconnecting... 2/5 (…)"), or the error turn.failed repeats next.
            self.last_error = str(line.get("message") or "")
            return [Event(EventKind.ACTIVITY, session_id=self.session_id, text=self.last_error[:200])]
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _item(self, kind: str, item: dict[str, Any], line: dict[str, Any]) -> list[Event]:
        item_type = item.get("type")
        item_id = str(item.get("id") or "")
        if item_type in TOOL_ITEMS:
            events = []
            if item_id not in self.called:
                self.called.add(item_id)
                events.append(self._tool_call(item, line))
            if kind == "item.completed" and item_type != "web_search":
                events.append(self._tool_result(item, line))
            elif kind == "item.updated":
                events.append(Event(EventKind.ACTIVITY, session_id=self.session_id, text="running a tool…"))
            return events
        if kind == "item.completed" and item_type == "agent_message":
            text = str(item.get("text") or "")
            if not text.strip():
                return []
            return [
                Event(
                    EventKind.TEXT,
                    uuid=self._uuid(item_id, "text"),
                    # No message_id: Codex's item ids repeat in every run of a thread.
                    session_id=self.session_id,
                    model=self.model,
                    text=text,
                    raw=line,
                )
            ]
        if kind == "item.completed" and item_type == "error":
            return [
                Event(
                    EventKind.ERROR,
                    uuid=self._uuid(item_id, "error"),
                    session_id=self.session_id,
                    text=str(item.get("message") or "codex reported an error"),
                    raw=line,
                )
            ]
        if item_type in ACTIVITY_FOR_ITEM:
            # Reasoning is the model's own, as Claude Code's thinking is: not posted.
            return [Event(EventKind.ACTIVITY, session_id=self.session_id, text=ACTIVITY_FOR_ITEM[item_type])]
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _tool_call(self, item: dict[str, Any], line: dict[str, Any]) -> Event:
        item_type = item["type"]
        if item_type == "command_execution":
            name, tool_input = "shell", {"command": str(item.get("command") or "")}
        elif item_type == "file_change":
            name, tool_input = "apply_patch", {"changes": item.get("changes") or []}
        elif item_type == "mcp_tool_call":
            name = f"mcp__{item.get('server', '')}__{item.get('tool', '')}"
            tool_input = item.get("arguments")
        else:  # web_search
            name, tool_input = "web_search", {"query": str(item.get("query") or "")}
        return Event(
            EventKind.TOOL_CALL,
            uuid=self._uuid(item.get("id"), "call"),
            session_id=self.session_id,
            model=self.model,
            tool_name=name,
            tool_id=str(item.get("id") or ""),
            tool_input=tool_input,
            raw=line,
        )

    def _tool_result(self, item: dict[str, Any], line: dict[str, Any]) -> Event:
        item_type = item["type"]
        status = str(item.get("status") or "")
        is_error = status in ("failed", "declined")
        if item_type == "command_execution":
            name = "shell"
            text = str(item.get("aggregated_output") or "")
            exit_code = item.get("exit_code")
            if exit_code not in (0, None):
                is_error = True
                text = f"{text.rstrip()}\n(exit code {exit_code})".lstrip()
            if status == "declined" and not text:
                text = "declined: the sandbox did not allow this command"
        elif item_type == "file_change":
            name = "apply_patch"
            changes = item.get("changes") or []
            text = "\n".join(
                f"{c.get('kind', '?')} {c.get('path', '?')}" for c in changes if isinstance(c, dict)
            )
            if is_error:
                text = f"patch {status}\n{text}".strip()
        else:
            name = f"mcp__{item.get('server', '')}__{item.get('tool', '')}"
            text = _mcp_result_text(item)
            is_error = is_error or bool(item.get("error"))
        return Event(
            EventKind.TOOL_RESULT,
            uuid=self._uuid(item.get("id"), "result"),
            session_id=self.session_id,
            tool_name=name,
            tool_id=str(item.get("id") or ""),
            text=text,
            is_error=is_error,
            raw=line,
        )

    def _completed(self, line: dict[str, Any]) -> Event:
        self.ended = True
        total = line.get("usage") if isinstance(line.get("usage"), dict) else {}
        usage = turn_usage(total, self.baseline)
        cost = pricing.openai_cost(
            self.model,
            input_tokens=usage["input_tokens"],
            cached_input_tokens=usage["cache_read_input_tokens"],
            output_tokens=usage["output_tokens"],
        )
        note = ""
        if cost is None:
            model = self.model or "(not configured)"
            note = f"no price for model {model} in motion_runner/harnesses/pricing.py"
        return Event(
            EventKind.TURN_END,
            uuid=self._uuid("turn-end"),
            session_id=self.session_id,
            model=self.model,
            usage=usage,
            cost_usd=cost,
            subtype="success",
            text=note,
            raw=line,
        )

    def _failed(self, line: dict[str, Any]) -> Event:
        self.ended = True
        error = line.get("error")
        message = str(error.get("message") or "") if isinstance(error, dict) else str(error or "")
        return Event(
            EventKind.TURN_END,
            uuid=self._uuid("turn-end"),
            session_id=self.session_id,
            model=self.model,
            is_error=True,
            subtype="turn_failed",
            text=message or self.last_error or "codex reported turn.failed without a message",
            raw=line,
        )

    def finish(self) -> list[Event]:
        if self.ended or not self.last_error:
            return []
        # Killed (timeout) or exited mid-turn: say what Codex last complained about.
        return [
            Event(
                EventKind.ERROR,
                uuid=self._uuid("last-error"),
                session_id=self.session_id,
                text=f"codex stopped before finishing its turn; its last error: {self.last_error}",
            )
        ]


LOOK_ONLY_REFUSED = (
    "@{agent} was not started: a look-only Codex turn cannot be kept from reading outside its "
    "workspace (its read-only sandbox reads anywhere, ~/.ssh included), so look-only Codex wakes "
    "are refused. Wake @{agent} with full tools, or set RUNNER_CODEX_LOOK_ONLY=allow to accept that."
)


def tool_arguments(policy: ToolPolicy, configured_servers: Iterable[str] = ()) -> list[str]:
    """The turn's policy as Codex flags. Codex has no per-tool allowlist: look-only is its
    read-only sandbox, and of the MCP servers its config holds, a read server is limited to the
    listed tools (`enabled_tools`) and any other server is switched off, so it never even
    starts; a full turn gets the workspace-write sandbox. Anything but "full" is look-only."""
    if policy.full:
        return ["-s", "workspace-write", *turn_server_arguments(policy)]
    argv = ["-s", "read-only", *turn_server_arguments(policy)]
    by_server: dict[str, list[str]] = {}
    whole: set[str] = set()
    for name in policy.look_only.mcp_tool_names():
        _, server, *tool = name.split("__", 2)
        if tool:
            by_server.setdefault(server, []).append(tool[0])
        else:
            whole.add(server)
    for server in [*configured_servers, *policy.look_only.turn_servers]:
        if server in whole:
            continue
        if server in by_server:
            argv += ["-c", f"mcp_servers.{server}.enabled_tools={json.dumps(by_server[server])}"]
        else:
            argv += ["-c", f"mcp_servers.{server}.enabled=false"]
    return argv


def token_variable(name: str) -> str:
    """The environment variable a turn server's bearer token is handed to Codex in."""
    return "MOTION_RUNNER_MCP_TOKEN_" + "".join(c if c.isalnum() else "_" for c in name.upper())


def turn_server_tokens(policy: ToolPolicy) -> dict[str, str]:
    """The bearer tokens of the turn's HTTP servers, by the variable Codex reads each from
    (`bearer_token_env_var`): in the CLI's environment, never on its command line."""
    tokens = {}
    for name, config in policy.look_only.turn_servers.items():
        auth = (config.get("headers") or {}).get("Authorization", "")
        if config.get("type") == "http" and auth.startswith("Bearer "):
            tokens[token_variable(name)] = auth[len("Bearer ") :]
    return tokens


def turn_server_arguments(policy: ToolPolicy) -> list[str]:
    """The turn's own servers (the record, with its pass) added to what Codex's config holds: a
    streamable HTTP server by its URL (its token from the environment), else its launch."""
    argv: list[str] = []
    for name, config in policy.look_only.turn_servers.items():
        if config.get("type") == "http":
            argv += ["-c", f"mcp_servers.{name}.url={_toml_string(config['url'])}"]
            if (config.get("headers") or {}).get("Authorization"):
                argv += [
                    "-c",
                    f"mcp_servers.{name}.bearer_token_env_var={_toml_string(token_variable(name))}",
                ]
            continue
        argv += ["-c", f"mcp_servers.{name}.command={_toml_string(config['command'])}"]
        argv += ["-c", f"mcp_servers.{name}.args=[{', '.join(map(_toml_string, config.get('args', [])))}]"]
        env = ", ".join(f"{key} = {_toml_string(value)}" for key, value in config.get("env", {}).items())
        argv += ["-c", f"mcp_servers.{name}.env={{{env}}}"]
    return argv


def turn_tool_arguments(turn, policy: ToolPolicy, env: dict[str, str]) -> list[str]:
    """A turn's tool flags, refused for a look-only turn unless RUNNER_CODEX_LOOK_ONLY allows it."""
    if not policy.full and settings.RUNNER_CODEX_LOOK_ONLY != "allow":
        raise HarnessError(LOOK_ONLY_REFUSED.format(agent=turn.agent.name))
    return tool_arguments(policy, configured_mcp_servers(env))


def codex_config(env: dict[str, str]) -> dict[str, Any]:
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or Path.home()) / ".codex")
    try:
        with open(Path(home) / "config.toml", "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def configured_mcp_servers(env: dict[str, str]) -> list[str]:
    """The MCP servers Codex would load from the config it will read."""
    return sorted((codex_config(env).get("mcp_servers") or {}).keys())


def configured_model(agent, env: dict[str, str]) -> str:
    """The agent's model, else the `model` in the config.toml Codex will read."""
    if agent.model:
        return agent.model
    return str(codex_config(env).get("model") or "")


def previous_thread_total(recorded_ends: Iterable[Any]) -> dict[str, Any] | None:
    """Codex's thread token totals at the end of the thread's latest recorded turn, from the raw
    lines of its recorded turn ends, newest first (the runner reads them)."""
    for raw in recorded_ends:
        if (
            isinstance(raw, dict)
            and raw.get("type") == "turn.completed"
            and isinstance(raw.get("usage"), dict)
        ):
            return raw["usage"]
    return None


@register
class CodexAdapter(HarnessAdapter):
    harness = HARNESS
    default_binary = "codex"
    parser_class = CodexParser

    def build_launch(self, turn, *, resume_session: str | None, policy: ToolPolicy) -> LaunchSpec:
        agent = turn.agent
        env = harness_environment(agent)
        argv = [self.binary_or_error(agent), "exec", "--json", "--skip-git-repo-check"]
        argv += turn_tool_arguments(turn, policy, env)
        if model := turn.model or agent.model:  # the room's choice for this Motion, else the agent's
            argv += ["-m", model]
        if agent.system_prompt:
            argv += ["-c", f"developer_instructions={_toml_string(agent.system_prompt)}"]
        # exec-level flags (sandbox, model, config) go before the resume subcommand.
        if resume_session:
            argv += ["resume", resume_session]
        # `-`: `codex exec` (and `exec resume`) read the prompt from stdin.
        argv += ["-"]
        cwd = turn_workspace(turn)
        files = list(policy.look_only.turn_files)  # the record server's pass, removed at the end
        env = {**env, **turn_server_tokens(policy)}  # last: an agent's own env cannot change them
        return LaunchSpec(argv=argv, env=env, cwd=cwd, stdin=turn.prompt, temp_files=files)

    def new_parser(
        self, session_id: str = "", *, turn=None, recorded_ends: RecordedEnds = no_recorded_ends
    ) -> CodexParser:
        model = ""
        if turn is not None:
            model = configured_model(turn.agent, harness_environment(turn.agent))
        return CodexParser(
            session_id,
            turn_key=f"turn{turn.pk}" if turn is not None else "",
            model=model,
            baseline=previous_thread_total(recorded_ends()) if session_id else None,
        )


def _toml_string(text: str) -> str:
    """A TOML basic string (`-c key=value` parses the value as TOML); a JSON string is one."""
    return json.dumps(text, ensure_ascii=False)
