"""Contract events: `eth_getLogs` in bounded block ranges up to the finalized head.

Chain, RPC URL, address and event signature are configuration (topic0 is the keccak of the
signature), so a new contract watch needs no new code. Per check: the finalized head once per
RPC lane (`eth_getBlockByNumber("finalized", false)`), then logs from the last block seen + 1
to the head in chunks of `max_range`, one `eth_getLogs` for all the watches on that RPC URL
that start at the same block (their addresses in one list, their topic0s OR'd; each watch
then takes the logs of its address and event); a provider's range or result-count error is answered with
the range it suggests, else the chunk is halved. The last block moves only past chunks that
succeeded; logs are keyed on (transactionHash, logIndex), so a chunk read twice posts once.
ERC-721 and ERC-20 share the Transfer topic0: 4 topics and empty data is a token id, 3 topics
and an amount in data is ERC-20.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Any

from motion_runner.lib.http.base import FetchError
from motion_runner.lib.http.client import HttpClient

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..keccak import event_topic
from .base import Change, CheckError, InvalidTarget, Outcome, Snapshot, WatchKind, check_url, public_url
from .web_page import refuse_literal_address

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
ZERO = "0x" + "0" * 40
ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
SIGNATURE = re.compile(r"^[A-Za-z_]\w*\(([\w\[\]]+(,[\w\[\]]+)*)?\)$")
STANDARDS = ("any", "erc721", "erc20")
RANGE_ERRORS = (-32005, -32602, -32600, -32000, -32001)
_ids = itertools.count(1)


class RangeTooBig(Exception):
    def __init__(self, message: str, suggestion: tuple[int, int] | None, limit: int | None):
        super().__init__(message)
        self.suggestion = suggestion
        self.limit = limit


def parse_range_hint(message: str) -> tuple[tuple[int, int] | None, int | None]:
    """What a provider's range error suggests: an explicit range, or a size limit."""
    if m := re.search(r"\[\s*(0x[0-9a-fA-F]+)\s*,\s*(0x[0-9a-fA-F]+)\s*\]", message):
        return (int(m.group(1), 16), int(m.group(2), 16)), None
    if m := re.search(r"range (\d+)\s*-\s*(\d+)", message):
        return (int(m.group(1)), int(m.group(2))), None
    if m := re.search(r"limit (?:of |is )?(\d+)", message):
        return None, int(m.group(1))
    if m := re.search(r"(?:max(?:imum)?|up to) (\d+) blocks", message):
        return None, int(m.group(1))
    return None, None


def short(address: str) -> str:
    return f"{address[:6]}…{address[-4:]}"


def topic_address(topic: str) -> str:
    return "0x" + topic[-40:]


def transfer_text(what: str, topics: list[str]) -> str:
    """A Transfer(from, to, …) log as a line: from the zero address is a mint, to it a burn
    (ERC-721's `what` is "token #N", ERC-20's the amount)."""
    sender, receiver = topic_address(topics[1]), topic_address(topics[2])
    if sender == ZERO:
        return f"{what} minted → {short(receiver)}"
    if receiver == ZERO:
        return f"{what} burned by {short(sender)}"
    return f"{what}: {short(sender)} → {short(receiver)}"


class ContractEvents(WatchKind):
    name = "contract"
    label = "Contract events"
    option_names = ("rpc", "chain", "event", "standard", "max_range", "start_block", "explorer")

    def clean_target(self, target: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if not ADDRESS.match(target):
            raise InvalidTarget(
                f"a contract watch needs a 0x-prefixed 40-hex-digit address, not {target[:100]!r}"
            )
        # The default RPC URL may hold a provider key: it stays in settings, never in the
        # watch's options (which every reader of the Motion sees).
        if options.get("rpc"):
            options["rpc"] = check_url(options["rpc"], "rpc")
            refuse_literal_address(options["rpc"], "options")
        else:
            options.pop("rpc", None)
        options["chain"] = str(options.get("chain") or "ethereum")[:40]
        event = str(options.get("event") or "Transfer(address,address,uint256)").replace(" ", "")
        if not SIGNATURE.match(event):
            raise InvalidTarget(
                f"event must be a Solidity signature like Transfer(address,address,uint256), not {event[:100]!r}",
                field="options",
            )
        options["event"] = event
        standard = options.get("standard") or "any"
        if standard not in STANDARDS:
            raise InvalidTarget(f"standard must be one of {', '.join(STANDARDS)}", field="options")
        options["standard"] = standard
        for name, low, high in (("max_range", 1, 1_000_000), ("start_block", 0, 10**12)):
            if name in options and options[name] is not None:
                value = options[name]
                if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                    raise InvalidTarget(
                        f"{name} must be a whole number from {low} to {high}", field="options"
                    )
        if options.get("explorer") and "{tx}" not in str(options["explorer"]):
            raise InvalidTarget("explorer must be a URL containing {tx}", field="options")
        return target.lower(), options

    def group_key(self, snap: Snapshot) -> str:
        return snap.options.get("rpc") or settings.WATCH_ETH_RPC_URL

    def rpc(self, http: HttpClient, url: str, method: str, params: list) -> Any:
        shown = public_url(url)
        try:
            response = http.post_json(
                url, {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
            )
        except FetchError as exc:
            raise CheckError(
                str(exc).replace(url, shown), permanent=exc.permanent, retry_after=exc.retry_after
            ) from exc
        if response.status == 429 or response.status >= 500:
            raise CheckError(f"{shown} answered {response.status}", retry_after=response.retry_after())
        if response.status != 200:
            raise CheckError(f"{shown} answered {response.status}", permanent=response.status == 404)
        try:
            body = response.json()
        except FetchError as exc:
            raise CheckError(f"{shown} did not answer JSON") from exc
        if not isinstance(body, dict):
            raise CheckError(f"{shown} did not answer a JSON-RPC object")
        if error := body.get("error"):
            message = str(error.get("message", ""))
            data = error.get("data")
            if isinstance(data, dict | str):
                message += f" {data}"
            if method == "eth_getLogs" and (
                error.get("code") in RANGE_ERRORS
                and re.search(r"range|limit|results|too (many|large)|blocks", message, re.I)
            ):
                raise RangeTooBig(message, *parse_range_hint(message))
            raise CheckError(f"{method}: {error.get('code')} {message}"[:500])
        return body.get("result")

    def finalized_head(self, http: HttpClient, url: str) -> int:
        block = self.rpc(http, url, "eth_getBlockByNumber", ["finalized", False])
        if not isinstance(block, dict) or "number" not in block:
            raise CheckError(f"{public_url(url)} has no finalized block")
        return int(block["number"], 16)

    def lanes(self, snaps: list[Snapshot], max_lanes: int) -> list[list[Snapshot]]:
        # One lane per RPC URL: its watches share the head and their eth_getLogs calls.
        return [snaps]

    def check(self, http: HttpClient, snaps: list[Snapshot]) -> Iterable[Outcome]:
        url = self.group_key(snaps[0])
        try:
            head = self.finalized_head(http, url)
        except CheckError as exc:
            yield from (Outcome(snap.id, error=exc) for snap in snaps)
            return
        ranges: dict[tuple[int, int], list[Snapshot]] = {}
        for snap in snaps:
            if snap.first_check or snap.state.get("block") is None:
                start = snap.options.get("start_block")
                block = start - 1 if isinstance(start, int) else head
                yield Outcome(snap.id, state={"checked": True, "block": min(block, head)})
                continue
            size = snap.options.get("max_range") or settings.WATCH_ETH_MAX_RANGE
            ranges.setdefault((int(snap.state["block"]), size), []).append(snap)
        for (last, size), group in ranges.items():
            yield from self.check_range(http, url, head, last, size, group)

    def check_range(
        self, http: HttpClient, url: str, head: int, last: int, size: int, group: list[Snapshot]
    ) -> Iterable[Outcome]:
        """The watches that start at one block: one eth_getLogs a chunk over all their addresses."""
        first = last
        topics = sorted(
            {event_topic(snap.options.get("event") or "Transfer(address,address,uint256)") for snap in group}
        )
        addresses = sorted({snap.target.lower() for snap in group})
        logs: list[dict] = []
        error: CheckError | None = None
        for _ in range(settings.WATCH_ETH_MAX_CHUNKS):
            if last >= head:
                break
            start, end = last + 1, min(last + size, head)
            query = {
                "address": addresses[0] if len(addresses) == 1 else addresses,
                "topics": [topics[0] if len(topics) == 1 else topics],
                "fromBlock": hex(start),
                "toBlock": hex(end),
            }
            try:
                found = self.rpc(http, url, "eth_getLogs", [query])
            except RangeTooBig as exc:
                if exc.suggestion and exc.suggestion[0] == start and start <= exc.suggestion[1] < end:
                    size = exc.suggestion[1] - start + 1
                elif exc.limit and exc.limit < end - start + 1:
                    size = exc.limit
                elif end > start:
                    size = max((end - start + 1) // 2, 1)
                else:
                    error = CheckError(f"eth_getLogs refused even one block: {exc}")
                    break
                continue
            except CheckError as exc:
                error = exc
                break
            logs.extend(log for log in found or [] if isinstance(log, dict))
            last = end
        by_address: dict[str, list[dict]] = {}
        for log in logs:
            by_address.setdefault(str(log.get("address", "")).lower(), []).append(log)
        for snap in group:
            if error is not None and last == first:
                yield Outcome(snap.id, error=error)
                continue
            topic0 = event_topic(snap.options.get("event") or "Transfer(address,address,uint256)")
            mine = [
                log
                for log in by_address.get(snap.target.lower(), [])
                if str((log.get("topics") or [""])[0]).lower() == topic0
            ]
            # Progress made before an error is kept; the error shows again on the next check.
            yield Outcome(
                snap.id,
                state={**snap.state, "checked": True, "block": last},
                changes=self.changes(snap, mine),
            )

    def changes(self, snap: Snapshot, logs: list[dict]) -> list[Change]:
        seen: set[tuple[str, str]] = set()
        standard = snap.options.get("standard", "any")
        explorer = snap.options.get("explorer") or settings.WATCH_ETH_EXPLORER
        chain = snap.options.get("chain", "ethereum")
        changes = []
        for log in sorted(
            logs,
            key=lambda item: (int(item.get("blockNumber", "0x0"), 16), int(item.get("logIndex", "0x0"), 16)),
        ):
            key = (log.get("transactionHash", ""), log.get("logIndex", ""))
            if log.get("removed") or key in seen:
                continue
            seen.add(key)
            topics = log.get("topics") or []
            data = log.get("data") or "0x"
            text = self.describe_log(topics, data, standard)
            if text is None:
                continue
            tx = log.get("transactionHash", "")
            changes.append(
                Change(
                    key=f"log:{tx}:{int(log.get('logIndex', '0x0'), 16)}",
                    line=f"⛓ {self.describe(snap)} on {chain}: {text}",
                    link=explorer.replace("{tx}", tx),
                    content=f"Event log: {log}",
                )
            )
        return changes

    def describe(self, snap: Snapshot) -> str:
        return snap.label or short(snap.target)

    def describe_log(self, topics: list[str], data: str, standard: str) -> str | None:
        if topics and topics[0].lower() == TRANSFER:
            if len(topics) == 4 and data in ("0x", "") and standard in ("any", "erc721"):
                return transfer_text(f"token #{int(topics[3], 16)}", topics)
            if len(topics) == 3 and standard in ("any", "erc20"):
                return transfer_text(str(int(data, 16) if data not in ("0x", "") else 0), topics)
            return None
        if standard != "any":
            return None
        return f"event {topics[0][:10] if topics else '?'}… in {len(topics)} topics"
