"""An Ethereum JSON-RPC node: `eth_blockNumber`, `eth_getBlockByNumber` with the `finalized`
tag, and `eth_getLogs` with address/topics filters and a block-range limit that answers the
way providers do (`-32602 "range N exceeds limit of M"`, or geth's `-32005 "query returned
more than 10000 results. Try with this block range [0x…, 0x…]."`)."""

from __future__ import annotations

from dataclasses import dataclass

from .http import FakeServer, Reply, Request

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def topic_for(address: str) -> str:
    return "0x" + address.lower().removeprefix("0x").rjust(64, "0")


@dataclass
class Log:
    address: str
    block: int
    topics: list[str]
    data: str
    tx: str
    index: int

    def render(self) -> dict:
        return {
            "address": self.address.lower(),
            "topics": self.topics,
            "data": self.data,
            "blockNumber": hex(self.block),
            "blockHash": "0x" + f"{self.block:064x}",
            "transactionHash": self.tx,
            "transactionIndex": "0x0",
            "logIndex": hex(self.index),
            "removed": False,
        }


class FakeEthNode(FakeServer):
    def __init__(self, host: str | None = None):
        super().__init__(host)
        self.head = 20_000_000
        self.finality = 64
        self.logs: list[Log] = []
        self.max_range: int | None = None
        self.range_style = "limit"  # limit: -32602 with a size; suggest: -32005 with a range
        self.tx_counter = 0

    @property
    def finalized(self) -> int:
        return self.head - self.finality

    def _tx(self) -> str:
        self.tx_counter += 1
        return "0x" + f"{self.tx_counter:064x}"

    def erc721_transfer(self, contract: str, block: int, sender: str, receiver: str, token: int) -> Log:
        log = Log(
            contract,
            block,
            [TRANSFER, topic_for(sender), topic_for(receiver), "0x" + f"{token:064x}"],
            "0x",
            self._tx(),
            0,
        )
        self.logs.append(log)
        return log

    def erc20_transfer(self, contract: str, block: int, sender: str, receiver: str, amount: int) -> Log:
        log = Log(
            contract,
            block,
            [TRANSFER, topic_for(sender), topic_for(receiver)],
            "0x" + f"{amount:064x}",
            self._tx(),
            1,
        )
        self.logs.append(log)
        return log

    def block_number(self, tag: object) -> int | None:
        if tag in ("latest", "pending"):
            return self.head
        if tag in ("finalized", "safe"):
            return self.finalized
        if tag == "earliest":
            return 0
        if isinstance(tag, str) and tag.startswith("0x"):
            return int(tag, 16)
        return None

    def handle(self, request: Request) -> Reply:
        if request.method != "POST":
            return Reply(405, b"method not allowed")
        try:
            call = request.json()
        except ValueError:
            return Reply.json(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            )
        rid, method, params = call.get("id"), call.get("method"), call.get("params") or []

        def ok(result: object) -> Reply:
            return Reply.json({"jsonrpc": "2.0", "id": rid, "result": result})

        def err(code: int, message: str) -> Reply:
            return Reply.json({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

        if method == "eth_blockNumber":
            return ok(hex(self.head))
        if method == "eth_getBlockByNumber":
            number = self.block_number(params[0] if params else None)
            if number is None or number > self.head:
                return ok(None)
            return ok(
                {
                    "number": hex(number),
                    "hash": "0x" + f"{number:064x}",
                    "timestamp": hex(1_700_000_000 + number * 12),
                }
            )
        if method == "eth_getLogs":
            query = params[0] if params else {}
            start = self.block_number(query.get("fromBlock", "latest"))
            end = self.block_number(query.get("toBlock", "latest"))
            if start is None or end is None:
                return err(-32602, "invalid block number")
            if self.max_range is not None and end - start + 1 > self.max_range:
                if self.range_style == "suggest":
                    return err(
                        -32005,
                        f"query returned more than 10000 results. Try with this block range [{hex(start)}, {hex(start + self.max_range - 1)}].",
                    )
                return err(-32602, f"range {end - start + 1} exceeds limit of {self.max_range}")
            addresses = query.get("address")
            if isinstance(addresses, str):
                addresses = [addresses]
            addresses = {a.lower() for a in addresses} if addresses else None
            topics = query.get("topics") or []
            found = []
            for log in self.logs:
                if not start <= log.block <= end:
                    continue
                if addresses and log.address.lower() not in addresses:
                    continue
                if (
                    topics
                    and topics[0]
                    and log.topics[0] not in (topics[0] if isinstance(topics[0], list) else [topics[0]])
                ):
                    continue
                found.append(log.render())
            return ok(found)
        return err(-32601, f"the method {method} does not exist/is not available")

    def calls(self, method: str) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.json().get("method") == method]
