"""memory-lane's record, written as memory-lane writes it (issue 22; docs/memory-lane.md).

In a subprocess with the host project's settings (tests/host/, the README's block: the
memory_lane binding), against its own PostgreSQL database: a renamed Mood with no Motion made by
hand, a stream post from memory-lane's runner under the Mood's old name and again under its new
one, and every kind of line the apps write themselves (tests/host/record_check.py). Each test
reads one fact back the way memory-lane's page reads the record (tests/host/conversations/page.py:
its timeline, step summaries, activity line and counts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from motion_runner.conf import app_settings
from motion_runner.record import binding
from tests.motion_runner.site.test_host_project import ROOT, admin_sql, fresh_host_database


@pytest.fixture(scope="module")
def seen():
    """migrate, then tests/host/record_check.py, run once for the module."""
    url, name = fresh_host_database("_record")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DJANGO_SETTINGS_MODULE": "tests.host.settings",
        "HOST_DATABASE_URL": url,
    }

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
        )

    try:
        migrate = run("-m", "django", "migrate", "--noinput")
        check = run("-m", "tests.host.record_check") if migrate.returncode == 0 else None
    finally:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert check is not None and check.returncode == 0, migrate.stderr + (check.stderr if check else "")
    return {**json.loads(check.stdout.splitlines()[-1]), "stderr": check.stderr}


# --- every event once, in the Mood memory-lane knows ------------------------------------------


def test_every_line_the_apps_wrote_is_in_memory_lanes_record_once(seen):
    record = seen["record"]
    assert record["index_only"] == [] and record["host_only"] == []
    assert record["host_total"] == record["index_total"] > 10


def test_the_runners_session_is_claimed_by_the_renamed_mood(seen):
    assert seen["claimed_by"] == ["harbor-of-moods"]


def test_a_line_memory_lane_stored_before_the_claim_gets_the_mood_with_it(seen):
    assert seen["waiting_line_mood"] == "harbor-of-moods"


# --- a Mood is a Motion -------------------------------------------------------------------------


def test_a_moods_slug_and_its_alias_both_find_one_motion_made_for_it(seen):
    assert seen["resolved"] == {
        "harbor-of-moods": "harbor-of-moods",
        "harbor": "harbor-of-moods",
        "nowhere": None,
    }
    assert seen["motions_made"] == [["harbor-of-moods", "Harbor of moods"]]  # nobody made it by hand


def test_the_runners_routes_accept_the_old_name_and_the_current_one(seen):
    # stream under the alias, the same under the slug, held under the alias
    assert seen["stream_status"] == [200, 200, 200]


def test_after_another_rename_every_name_it_had_finds_the_motion_whose_title_follows(seen):
    assert set(seen["after_rename"].values()) == {"harbor-of-moods"}
    assert seen["title_after_rename"] == "Harbor of all moods"
    assert seen["stream_after_rename"] == 200
    assert seen["api_by_new_slug"] == 200
    assert seen["quiet_by_old_slug"] == 201


def test_the_thread_page_opens_under_every_name_of_the_mood_and_no_other(seen):
    assert seen["thread_by_each_name"] == {
        "harbor": 200,
        "harbor-of-moods": 200,
        "harbor-of-all-moods": 200,
        "nowhere": 404,
    }


def test_a_mood_made_for_a_motion_takes_its_slug_from_the_title_as_memory_lane_does(seen):
    # Mood.free_slug: the title's slug, numbered past one taken; the Motion's slug an alias.
    assert seen["made_moods"] == {
        "the-lighthouse-keeper": ["lighthouse"],
        "the-lighthouse-keeper-2": ["lighthouse-two"],
    }
    assert seen["made_moods_find_their_motions"] == ["lighthouse", "lighthouse-two"]


def test_a_post_in_a_mood_the_apps_never_knew_makes_its_motion_and_reaches_them(seen):
    assert seen["quay"] == {"motion": ["quay", "Quay"], "index": ["hello quay"]}


def test_a_motion_retitled_renames_its_mood_as_memory_lane_renames_one(seen):
    # Mood.rename: the new title, the slug that follows it, every old slug kept as an alias; the
    # Motion keeps its own slug and title, and is still the only one.
    assert seen["motion_renamed"] == {
        "mood": ["harbor-at-dusk", "Harbor at dusk"],
        "aliases": ["harbor", "harbor-of-all-moods", "harbor-of-moods"],
        "motion": ["harbor-of-moods", "Harbor at dusk"],
        "motions": 1,
    }


def test_after_a_motion_rename_the_moods_new_slug_and_every_alias_reach_every_route(seen):
    reached = {"resolves": "harbor-of-moods", "held": 200, "thread": 200}
    assert seen["after_motion_rename"] == {
        "harbor-at-dusk": reached,
        "harbor-of-all-moods": reached,
        "harbor": reached,
    }
    assert seen["stream_after_motion_rename"] == 200


# --- a session nobody has claimed yet ----------------------------------------------------------


def test_an_unclaimed_sessions_lines_reach_memory_lanes_record_at_once_with_no_mood(seen):
    unclaimed = seen["unclaimed"]
    assert unclaimed["rows_before_claim"] > 10
    assert unclaimed["moods_before_claim"] == [""]
    assert unclaimed["kinds_before_claim"] == ["message", "result", "use"]


def test_an_unclaimed_sessions_lines_wait_for_the_claim_in_the_apps_index(seen):
    assert seen["unclaimed"]["index_before_claim"] == 0


def test_an_unclaimed_batch_posted_again_is_written_once(seen):
    assert seen["unclaimed"]["repost_same"] is True


def test_the_claim_gives_the_lines_their_mood_and_rewrites_none(seen):
    unclaimed = seen["unclaimed"]
    assert unclaimed["moods_after_claim"] == ["harbor-at-dusk"]
    assert unclaimed["rows_after_claim"] == unclaimed["rows_before_claim"]
    assert unclaimed["rewritten"] == []


def test_after_the_claim_the_index_has_every_line_and_memory_lane_only_its_own_extras(seen):
    # memory-lane keeps the lines the apps' index never holds (a compaction's summary, command
    # lines: unindexed), the rest are in both under one id, none doubled by a later post.
    unclaimed = seen["unclaimed"]
    assert unclaimed["index_after_claim"] == unclaimed["rows_after_claim"] - len(
        unclaimed["host_not_in_index"]
    )
    assert unclaimed["index_not_in_host"] == []
    assert set(unclaimed["host_not_in_index"]) == {"message"}
    assert unclaimed["after_repost_same"] is True
    assert unclaimed["answers"][2] == []  # claimed now: nothing waits


# --- tool calls and their results ---------------------------------------------------------------


def test_every_tool_use_holds_the_tools_input_and_every_step_has_a_summary(seen):
    assert seen["steps"] and seen["timeline_steps"] == len(seen["steps"])
    for step in seen["steps"]:
        assert step["content"] == step["recorded_input"]
        assert step["summary"]
        assert step["recipients"] == [step["tool"]]  # the agent calls the tool


def test_no_tool_output_reaches_the_record_under_memory_lanes_default(seen):
    # TOOL_RESULT_CONTENT_CHARS unset: 0, memory-lane's default for a public record.
    assert seen["tool_results"] and all(result["content"] == "" for result in seen["tool_results"])
    assert all(step["result"] == "" for step in seen["steps"])


def test_a_host_that_keeps_some_tool_output_gets_that_much_and_no_more(seen):
    # TOOL_RESULT_CONTENT_CHARS = 12, then how much was not kept (27 characters in all)
    assert seen["kept_tool_result"] == "line one of \n[15 more characters not kept]"


def test_a_tool_result_is_sent_by_the_tool_result_participant_to_the_agent(seen):
    assert {(r["sender"], r["sender_type"]) for r in seen["tool_results"]} == {("tool-result", "tool")}
    assert all(r["recipients"] == ["scribe"] for r in seen["tool_results"])


# --- turn ends ----------------------------------------------------------------------------------


def test_a_turns_end_is_a_turn_result_sent_by_system(seen):
    results = seen["turn_results"]
    assert [r["sender"] for r in results] == ["system", "system"]
    assert all(r["content"]["type"] == "turn-result" and r["content"]["agent"] == "scribe" for r in results)
    assert results[1]["content"]["cost_usd"] == 0.0123


def test_the_turns_last_line_is_stamped_with_its_stop_reason_and_the_agent_is_done(seen):
    assert seen["stream_last_line_stop"] == "end_turn"
    assert seen["activity_after_turn"] is None
    assert seen["lines"]["refused"]["stop_reason"] == "refusal"  # the result's own, from TURN_ENDS
    assert seen["activity_after_refusal"] is None


# --- the apps' own lines ------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["wake", "request", "error", "boundary"])
def test_the_apps_own_lines_are_systems_never_the_agents_words(seen, line):
    row = seen["lines"][line]
    assert (row["sender"], row["sender_type"]) == ("system", "system")
    assert row["content"]["agent"] == "scribe"
    assert row["content"]["text"] not in seen["turn_words"]


def test_the_wake_line_is_no_self_mention_and_no_turn_of_the_agent(seen):
    assert not any(word.startswith("@scribe woke") for word in seen["turn_words"])
    # memory-lane's count of what was said leaves the system's rows out
    # the host's alone: the continuation, ada's line (the prompt's echo is system's); the Thought
    # is in both records (a collapsed step in the apps' thread)
    host_alone = 3
    assert seen["message_count"] == seen["record"]["host_total"] + host_alone - seen["system_rows"]


def test_a_dot_is_memory_lanes_quiet_row_of_the_agent(seen):
    dot = seen["lines"]["dot"]
    assert (dot["sender"], dot["content"], dot["stop_reason"]) == (
        "scribe",
        '<silent by="screen">nothing new</silent>',
        "end_turn",
    )
    assert "quiet" in seen["timeline_kinds"]


def test_the_models_thinking_is_a_thought_of_the_agent_kept_once_and_redacted(seen):
    thought = seen["thought"]
    assert seen["thinking_status"] == [200, 200]
    assert thought["signature"] == "sig-of-the-vendor"
    assert (thought["sender"], thought["recipients"], thought["copies"]) == ("scribe", ["scribe"], 1)
    [block] = thought["content"]
    assert block["type"] == "thinking" and "sk-ant-api03-CCCC" not in block["thinking"]
    assert "[REDACTED" in block["thinking"]
    assert "thought" in seen["timeline_kinds"]


def test_the_apps_own_thread_keeps_the_thinking_as_its_collapsed_step(seen):
    assert seen["thought"]["in_index"] is True


def test_a_prompts_echo_is_kept_as_systems_line_never_anyones_words(seen):
    sender, content = seen["unindexed_lines"]["prompt"]
    assert sender == "system"
    assert content == {
        "type": "prompt",
        "agent": "scribe",
        "text": "justin mentioned you (@scribe) in the Motion “Harbor”",
    }
    assert not any(word.startswith("justin mentioned you") for word in seen["turn_words"])


def test_a_streamed_compaction_summary_is_the_agents_continuation(seen):
    sender, is_continuation, content = seen["unindexed_lines"]["continuation"]
    assert (sender, is_continuation) == ("scribe", True)
    assert content.startswith("This session is being continued")
    assert seen["unindexed_lines"]["in_index"] == 0  # the apps' own thread shows neither


def test_a_compaction_summary_is_the_agents_folded_continuation(seen):
    summary = seen["lines"]["summary"]
    assert summary["sender"] == "scribe" and summary["is_continuation"]
    assert "compaction" in seen["timeline_kinds"]


def test_only_the_agents_own_words_and_peoples_posts_are_turns(seen):
    assert seen["turn_words"] == [
        "typed before the claim",  # ada's, stored by memory-lane's watcher before the claim
        "Let me use Read.",
        "Done: the file says hello.",
        "It means 42.",
        "@scribe thanks",
        "and one more thing",
        "said before its parent came",
        "I can't help with that.",
    ]


# --- who it was for, what it answers ------------------------------------------------------------


def test_an_agents_words_go_to_the_sessions_user_the_agent_itself(seen):
    assert seen["lines"]["refused"]["recipients"] == ["scribe"]


def test_a_post_made_in_the_apps_thread_is_filed_as_a_composer_post(seen):
    person = seen["lines"]["person"]
    assert (person["sender"], person["sender_type"], person["source_file"]) == ("justin", "human", "mood-web")


def test_a_post_typed_on_memory_lanes_page_with_an_ssh_key_device_wakes_with_full_tools(seen):
    assert seen["host_page"]["sign_in"]["key"] == "ssh"
    assert seen["host_page"]["modes"]["key"] == "full"


def test_a_post_typed_with_a_pickipedia_sign_in_wakes_look_only(seen):
    assert seen["host_page"]["sign_in"]["wiki"] == "wiki"
    assert seen["host_page"]["modes"]["wiki"] == "look"


def test_a_composer_post_no_device_marked_vouches_for_nothing(seen):
    assert seen["host_page"]["sign_in"]["unmarked"] == ""
    assert seen["host_page"]["modes"]["unmarked"] == "look"


def test_an_ai_entitys_composer_post_vouches_for_nothing_whatever_its_name_here(seen):
    # Issue 30, item 2: memory-lane's is_biological_human decides, not a name match of our Agents.
    assert seen["host_page"]["sign_in"]["ai_entity"] == ""
    assert seen["host_page"]["modes"]["ai_entity"] == "look"


def test_stop_on_memory_lanes_page_stops_the_agents_running_turn(seen):
    requested, stopped_by = seen["host_page"]["stop"]
    assert requested and stopped_by.startswith("justin")


def test_memory_lanes_event_rows_are_nobodys_post(seen):
    # A ■ or a deploy notice handed over as a person's empty post would start considerations.
    assert seen["host_page"]["event_rows_indexed"] == 0


def test_a_hold_shows_on_memory_lanes_page_as_its_runners_holds_do(seen):
    held = seen["host_held"]["scribe"]
    assert held["reason"] == "at its hourly cap" and held["until"] is None


def test_a_lifted_hold_is_gone_from_memory_lanes_page(seen):
    assert "scribe" not in seen["host_held_lifted"]


def test_a_transcript_line_names_its_parent_or_the_parent_it_waits_for(seen):
    assert seen["lines"]["child"]["parent"] == seen["known_parent"]
    orphan = seen["lines"]["orphan"]
    assert orphan["parent"] is None and orphan["looking_for_parent"] == seen["unseen_parent"]


# --- installed beside memory-lane's own logging -------------------------------------------------


def test_the_readmes_logging_keeps_the_hosts_own_loggers_and_handlers(seen):
    assert seen["logging"] == {
        "loggers": ["conversations", "django.request"],
        "handlers": ["console", "requests"],
    }


def test_the_hosts_own_loggers_lines_are_redacted_in_its_own_format(seen):
    logged = seen["stderr"]
    assert "memory-lane WARNING conversations: imported with [REDACTED" in logged  # its own format, kept
    assert "a request with [REDACTED" in logged
    assert "sk-ant-api03-AAAA" not in logged and "ghp_BBBB" not in logged


# --- a host without memory-lane's rules for a Mood's names -------------------------------------


def test_a_host_whose_mood_has_no_by_slug_or_free_slug_is_told_so_at_start_up(settings):
    settings.MOTION_RUNNER_RECORD = "memory_lane"
    models = dict(app_settings.MOTION_RUNNER_RECORD_MODELS)
    # Installed models standing in for an older memory-lane's: a Mood without its naming rules.
    settings.MOTION_RUNNER_RECORD_MODELS = {
        **models,
        "message": "motion_runner.Message",
        "mood": "motion_runner.Motion",
    }
    with pytest.raises(ImproperlyConfigured, match="no by_slug or free_slug"):
        binding().connect()


def test_a_note_kept_with_remember_reaches_memory_lanes_record_once(seen):
    note = seen["remembered"]
    assert note["index"] == [["note", "the lamp is lit at dusk"]]
    assert len(note["host"]) == 1
    sender, content, mood = note["host"][0]
    assert sender == "scribe" and "the lamp is lit at dusk" in json.dumps(content)
    assert mood == "the-lighthouse-keeper"
