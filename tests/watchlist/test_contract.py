"""Contract events: eth_getLogs in bounded ranges up to the finalized head."""

from __future__ import annotations

import pytest

from watchlist.checker import run_cycle
from watchlist.keccak import event_topic
from watchlist.kinds import KINDS, InvalidTarget

from .conftest import lines, recheck

pytestmark = pytest.mark.django_db

MERCH = "0x1111111111111111111111111111111111111111"
COIN = "0x2222222222222222222222222222222222222222"
ALICE = "0xaaaa00000000000000000000000000000000aaaa"
BOB = "0xbbbb00000000000000000000000000000000bbbb"
ZERO = "0x" + "0" * 40


def test_the_transfer_signature_hashes_to_the_erc721_topic():
    assert event_topic("Transfer(address,address,uint256)") == (
        "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
    )


def test_a_first_check_starts_at_the_finalized_head_not_the_latest(node, watch, merch):
    contract = watch("contract", MERCH)

    run_cycle()

    contract.refresh_from_db()
    assert contract.last_block == node.finalized != node.head
    assert node.calls("eth_getBlockByNumber")[0].json()["params"] == ["finalized", False]
    assert lines(merch) == []


def test_an_erc721_transfer_reads_token_from_to_with_mints_and_burns_named(node, watch, merch):
    watch("contract", MERCH, label="merch")
    run_cycle()
    start = node.finalized
    node.head += 100
    node.erc721_transfer(MERCH, start + 1, ZERO, ALICE, 12)
    node.erc721_transfer(MERCH, start + 2, ALICE, BOB, 12)
    node.erc721_transfer(MERCH, start + 3, BOB, ZERO, 12)
    node.erc721_transfer(MERCH, node.finalized + 5, ALICE, BOB, 13)  # not final yet

    recheck()

    assert [line.split(" https://")[0] for line in lines(merch)] == [
        "⛓ merch on ethereum: token #12 minted → 0xaaaa…aaaa",
        "⛓ merch on ethereum: token #12: 0xaaaa…aaaa → 0xbbbb…bbbb",
        "⛓ merch on ethereum: token #12 burned by 0xbbbb…bbbb",
    ]


def test_erc20_and_erc721_transfers_share_a_topic_and_are_told_apart(node, watch, merch):
    watch("contract", COIN, label="coin")
    watch("contract", MERCH, label="merch-721", options={"standard": "erc721"})
    run_cycle()
    start = node.finalized
    node.head += 10
    node.erc20_transfer(COIN, start + 1, ALICE, BOB, 5 * 10**18)
    node.erc20_transfer(MERCH, start + 1, ALICE, BOB, 7)  # an ERC-20 log on the 721 watch's address
    node.erc721_transfer(MERCH, start + 2, ALICE, BOB, 3)

    recheck()

    shown = sorted(line.split(" https://")[0] for line in lines(merch))
    assert shown == [
        "⛓ coin on ethereum: 5000000000000000000: 0xaaaa…aaaa → 0xbbbb…bbbb",
        "⛓ merch-721 on ethereum: token #3: 0xaaaa…aaaa → 0xbbbb…bbbb",
    ]


def test_a_range_limit_error_is_answered_with_smaller_ranges(node, watch, merch, settings):
    settings.WATCH_ETH_MAX_RANGE = 5000
    contract = watch("contract", MERCH)
    run_cycle()
    start = node.finalized
    node.head += 2500
    node.max_range = 1000
    node.erc721_transfer(MERCH, start + 2400, ALICE, BOB, 1)

    recheck()

    contract.refresh_from_db()
    ranges = [
        (int(c.json()["params"][0]["fromBlock"], 16), int(c.json()["params"][0]["toBlock"], 16))
        for c in node.calls("eth_getLogs")
    ]
    assert ranges[0] == (start + 1, start + 2500)  # refused: "range 2500 exceeds limit of 1000"
    assert ranges[1:] == [
        (start + 1, start + 1000),
        (start + 1001, start + 2000),
        (start + 2001, start + 2500),
    ]
    assert contract.last_block == node.finalized and len(lines(merch)) == 1


def test_a_suggested_block_range_is_used(node, watch, merch):
    watch("contract", MERCH)
    run_cycle()
    start = node.finalized
    node.head += 300
    node.max_range, node.range_style = 128, "suggest"

    recheck()

    second = node.calls("eth_getLogs")[1].json()["params"][0]
    assert (int(second["fromBlock"], 16), int(second["toBlock"], 16)) == (start + 1, start + 128)


def test_logs_seen_twice_are_posted_once(node, watch, merch):
    contract = watch("contract", MERCH)
    run_cycle()
    start = node.finalized
    node.head += 10
    node.erc721_transfer(MERCH, start + 1, ALICE, BOB, 12)
    recheck()
    # As if the last block had not been saved: the same logs come back.
    type(contract).objects.filter(pk=contract.pk).update(last_block=start)

    recheck()

    assert len(lines(merch)) == 1


def test_a_contract_watch_is_configuration_not_code():
    kind = KINDS["contract"]
    target, options = kind.clean(
        MERCH.upper().replace("0X", "0x"), {"event": "Approval(address, address, uint256)", "chain": "base"}
    )
    assert target == MERCH and options["event"] == "Approval(address,address,uint256)"
    with pytest.raises(InvalidTarget, match="Solidity signature"):
        kind.clean(MERCH, {"event": "Approval"})
    with pytest.raises(InvalidTarget, match="40-hex-digit address"):
        kind.clean("0x123", {})


def test_contract_watches_on_one_rpc_url_share_one_get_logs_over_their_addresses(node, watch, merch):
    watch("contract", MERCH, label="merch")
    watch("contract", COIN, label="coin")
    watch("contract", ALICE, label="approvals", options={"event": "Approval(address,address,uint256)"})
    run_cycle()
    start = node.finalized
    node.head += 10
    node.erc721_transfer(MERCH, start + 1, ALICE, BOB, 3)
    node.erc20_transfer(COIN, start + 2, ALICE, BOB, 9)
    node.erc721_transfer(ALICE, start + 3, ALICE, BOB, 4)  # a Transfer from the approvals watch's address
    node.reset_log()

    recheck()

    calls = node.calls("eth_getLogs")
    assert len(calls) == 1
    query = calls[0].json()["params"][0]
    assert sorted(query["address"]) == sorted([MERCH, COIN, ALICE])
    assert sorted(query["topics"][0]) == sorted(
        [event_topic("Transfer(address,address,uint256)"), event_topic("Approval(address,address,uint256)")]
    )
    assert sorted(line.split(" https://")[0] for line in lines(merch)) == [
        "⛓ coin on ethereum: 9: 0xaaaa…aaaa → 0xbbbb…bbbb",
        "⛓ merch on ethereum: token #3: 0xaaaa…aaaa → 0xbbbb…bbbb",
    ]
