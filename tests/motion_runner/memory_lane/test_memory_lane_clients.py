"""memory-lane's own clients against this project, with only the URL and the key changed.

Nothing of memory-lane is copied here. Each helper below replays exactly the requests one of its
clients sends (path, body shape, headers) and applies the same rule to the answer, naming the
memory-lane file and function it mirrors (cryptograss/memory-lane, late 2026):

- RunnerStream: poller/mood_poller.py, StreamPoster.put/run/send — only `assistant`, `user` and
  `result` events, in batches of at most 50, `{"harness": "claude-code", "session_id", "events"}`
  with `Authorization: Bearer <MOOD_RUNNER_KEYS key>`; a 200 is sent, 400/401/403/404/413/503 give
  up at once, anything else is retried (3 tries) and then the events are dropped.
- MoodAPI.quiet (201 is success) and MoodAPI.held (200 is success): same file.
- Watcher: watcher/conversation_watcher.py, ConversationWatcher.flush_batch/requeue — raw transcript
  lines as `{"lines", "username", "source": "hunter-watcher-<user>"}` with `Bearer INGEST_API_KEY`;
  anything but a 200 puts the batch back in the queue, to be sent again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.core.cache import cache

from motion_runner.ingest.sessions import claim_session
from motion_runner.memory_lane.held import held_key
from motion_runner.models import Message, MotionSession, TranscriptFile, UnclaimedSession
from motion_runner.record.own import OwnRecord
from motion_runner.signals import hold_changed
from motion_runner.transcripts.importer import assign_session
from tests import recorded
from tests.factories import AgentFactory, MotionFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
RUNNER_KEY = "vault-key-for-scribe-0123456789"
INGEST_KEY = "ingest-key-0123456789"
STREAMED = ("assistant", "user", "result")  # mood_poller.STREAMED
GIVE_UP = (400, 401, 403, 404, 413, 503)  # StreamPoster.send: "asking again won't change the answer"


@dataclass
class RunnerStream:
    """mood_poller.StreamPoster, as seen from the server: what it posts and when it gives up."""

    client: object
    slug: str
    session_id: str
    key: str = RUNNER_KEY
    retries: int = 3
    sent: int = 0
    failed: int = 0
    answers: list = field(default_factory=list)

    def post_turn(self, events: list[dict]) -> None:
        streamed = [e for e in events if isinstance(e, dict) and e.get("type") in STREAMED]
        for start in range(0, len(streamed), 50):
            self.send(streamed[start : start + 50])

    def send(self, events: list[dict]) -> bool:
        body = {"harness": "claude-code", "session_id": self.session_id, "events": events}
        for _ in range(self.retries):
            response = self.client.post(
                f"/api/moods/{self.slug}/stream/",
                json.dumps(body),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {self.key}",
            )
            self.answers.append(response)
            if response.status_code == 200:
                self.sent += len(events)
                return True
            if response.status_code in GIVE_UP:
                break
        self.failed += len(events)
        return False


def mood_post(client, path: str, body: dict, key: str = RUNNER_KEY):
    """mood_poller.MoodAPI.quiet / .held: a JSON post with the runner's key."""
    return client.post(
        path, json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )


@dataclass
class Watcher:
    """conversation_watcher.ConversationWatcher in remote mode: flush_batch and requeue."""

    client: object
    username: str = "magent"
    key: str = INGEST_KEY
    pending: list[str] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)

    def flush_batch(self):
        batch, self.pending = self.pending, []
        headers = {"HTTP_AUTHORIZATION": f"Bearer {self.key}"} if self.key else {}
        response = self.client.post(
            "/api/ingest/",
            json.dumps(
                {"lines": batch, "username": self.username, "source": f"hunter-watcher-{self.username}"}
            ),
            content_type="application/json",
            **headers,
        )
        if response.status_code == 200:
            self.results.append(response.json())
        else:
            self.pending = batch + self.pending  # requeue: sent again at the next flush
        return response


def transcript_lines() -> list[str]:
    return [json.dumps(line) for line in recorded.lines("transcript")]


@pytest.fixture(autouse=True)
def memory_lane_keys(settings, scribe, tmp_path):
    """memory-lane's vault: a runner key bound to @scribe, and the watcher's ingest key."""
    settings.MOOD_RUNNER_KEYS = {"scribe": RUNNER_KEY}
    settings.INGEST_API_KEY = INGEST_KEY
    settings.INGEST_SPOOL_DIR = str(tmp_path / "spool")
    # The cache is the shared Redis in CI: a hold left by an earlier run must not show here.
    cache.delete(held_key("harbor", scribe.agent))


# --- the runner's stream ------------------------------------------------------------------------


def test_the_runners_stream_lands_every_event_once(client, scribe):
    runner = RunnerStream(client, "harbor", SESSION)
    runner.post_turn(recorded.first_run())
    assert runner.failed == 0 and runner.sent == 5
    kinds = list(Message.objects.filter(motion_id="harbor").values_list("kind", flat=True))
    assert kinds == ["text", "tool_call", "tool_result", "text", "turn_end"]


def test_the_runners_answer_counts_each_event_in_exactly_one_place(client, scribe):
    """The recorded session as the runner posts it: 13 events, two of them the compaction's user
    lines (the summary and the command's output), which write nothing and were in no count."""
    runner = RunnerStream(client, "harbor", SESSION)
    runner.post_turn(recorded.lines("stream"))
    answer = runner.answers[-1].json()
    assert runner.sent == 13
    assert answer["imported"] + answer["skipped"] + len(answer["errors"]) == 13
    assert (answer["imported"], answer["skipped"], answer["errors"]) == (11, 2, [])


def test_a_runner_key_speaks_for_its_agent(client, scribe):
    RunnerStream(client, "harbor", SESSION).post_turn(recorded.first_run())
    assert set(Message.objects.filter(kind="text").values_list("sender", flat=True)) == {"scribe"}


def test_a_forked_wake_posted_in_another_mood_is_reclaimed_not_dropped(client, scribe):
    elsewhere = MotionFactory(slug="elsewhere")
    elsewhere.agents.add(scribe.agent)
    RunnerStream(client, "harbor", SESSION).post_turn(recorded.first_run())
    runner = RunnerStream(client, "elsewhere", SESSION)
    runner.post_turn(recorded.lines("stream")[8:16])
    assert runner.failed == 0
    assert MotionSession.objects.get(pk=SESSION).motion_id == "elsewhere"
    assert Message.objects.filter(motion_id="elsewhere", sender="scribe", kind="text").count() == 2


def test_a_wrong_runner_key_is_a_401_the_runner_does_not_retry(client, scribe):
    runner = RunnerStream(client, "harbor", SESSION, key="not-the-key")
    runner.post_turn(recorded.first_run())
    assert [r.status_code for r in runner.answers] == [401]
    assert "error" in runner.answers[0].json() and isinstance(runner.answers[0].json()["error"], str)


def test_a_runner_key_for_an_agent_not_of_the_mood_is_a_403(client, scribe):
    MotionFactory(slug="private")
    runner = RunnerStream(client, "private", SESSION)
    runner.post_turn(recorded.first_run())
    assert [r.status_code for r in runner.answers] == [403]
    assert Message.objects.count() == 0


def test_a_session_id_that_is_not_a_uuid_is_a_400_saying_so(client, scribe):
    runner = RunnerStream(client, "harbor", "not-a-uuid")
    runner.post_turn(recorded.first_run())
    assert runner.answers[0].status_code == 400
    assert "UUID" in runner.answers[0].json()["error"]


def test_an_unknown_mood_is_a_404(client, scribe):
    runner = RunnerStream(client, "nowhere", SESSION)
    runner.post_turn(recorded.first_run())
    assert [r.status_code for r in runner.answers] == [404]


def test_a_key_the_project_issued_works_on_the_mood_routes_too(client, scribe):
    runner = RunnerStream(client, "harbor", SESSION, key=scribe.key)
    runner.post_turn(recorded.first_run())
    assert runner.failed == 0


# --- quiet and held -----------------------------------------------------------------------------


def test_the_screens_quiet_dot_is_a_201_with_its_id(client, scribe):
    response = mood_post(
        client, "/api/moods/harbor/quiet/", {"reason": "people coordinating", "by": "screen"}
    )
    assert response.status_code == 201
    dot = Message.objects.get(pk=response.json()["id"])
    assert dot.text == '<silent by="screen">people coordinating</silent>'
    assert dot.sender == "scribe"


def test_a_hold_is_a_200_naming_it_and_an_empty_reason_lifts_it(client, scribe):
    held = mood_post(client, "/api/moods/harbor/held/", {"reason": "waiting on <b>CI</b>", "until": None})
    assert held.status_code == 200
    assert held.json()["held"]["reason"] == "waiting on CI"
    lifted = mood_post(client, "/api/moods/harbor/held/", {"reason": "", "until": None})
    assert lifted.status_code == 200 and lifted.json() == {"held": None}


def test_a_hold_the_hosts_page_cannot_show_is_still_kept_here(client, scribe):
    def broken(sender, **kwargs):
        raise RuntimeError("the host's cache is down")

    hold_changed.connect(broken)
    try:
        held = mood_post(client, "/api/moods/harbor/held/", {"reason": "waiting on CI", "until": None})
    finally:
        hold_changed.disconnect(broken)
    assert held.status_code == 200 and held.json()["held"]["reason"] == "waiting on CI"
    assert cache.get(held_key("harbor", scribe.agent))["reason"] == "waiting on CI"


def test_the_runners_hold_is_told_through_hold_changed_with_its_arguments(client, scribe):
    heard = []

    def listen(sender, motion, agent, hold, lasts, **kwargs):
        heard.append((motion.slug, agent.name, hold and hold["reason"], lasts))

    hold_changed.connect(listen)
    try:
        mood_post(client, "/api/moods/harbor/held/", {"reason": "waiting on CI", "until": None})
        mood_post(client, "/api/moods/harbor/held/", {"reason": "", "until": None})
    finally:
        hold_changed.disconnect(listen)
    assert heard == [("harbor", "scribe", "waiting on CI", 900), ("harbor", "scribe", None, 0)]


def test_a_runner_key_speaks_on_the_motion_routes_as_agent_authentication_classes_lists_it(client, scribe):
    body = {"reason": "people coordinating", "by": "screen"}
    assert mood_post(client, "/api/motions/harbor/quiet/", body).status_code == 201


def test_without_runner_keys_in_agent_authentication_classes_a_runner_key_is_refused(
    client, scribe, settings
):
    settings.AGENT_AUTHENTICATION_CLASSES = ["motion_runner.api.auth.AgentKeyAuthentication"]
    body = {"reason": "people coordinating", "by": "screen"}
    assert mood_post(client, "/api/motions/harbor/quiet/", body).status_code == 401


def test_a_hold_with_a_bad_until_is_a_400_in_memory_lanes_error_shape(client, scribe):
    response = mood_post(client, "/api/moods/harbor/held/", {"reason": "later", "until": "next tuesday"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("until:")


def test_an_outsider_without_a_key_is_refused_on_every_mood_route(client, scribe):
    for route in ("stream", "quiet", "held"):
        response = client.post(f"/api/moods/harbor/{route}/", "{}", content_type="application/json")
        assert response.status_code == 401, route


# --- the transcript watcher ---------------------------------------------------------------------


def test_the_watchers_lines_land_once_for_a_claimed_session(client, scribe, harbor):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    watcher = Watcher(client, pending=transcript_lines())
    assert watcher.flush_batch().status_code == 200
    first = watcher.results[-1]
    assert first["imported"] > 0
    assert first["imported"] + first["skipped"] + len(first["errors"]) == len(transcript_lines())
    count = Message.objects.count()
    watcher.pending = transcript_lines()
    watcher.flush_batch()
    assert watcher.results[-1]["imported"] == 0
    assert Message.objects.count() == count


def test_the_stream_and_the_watcher_say_each_thing_once(client, scribe):
    RunnerStream(client, "harbor", SESSION).post_turn(recorded.lines("stream"))
    Watcher(client, pending=transcript_lines()).flush_batch()
    said = {
        line["uuid"]
        for line in recorded.lines("transcript")
        if line.get("type") == "assistant" and line["message"]["content"][0].get("type") == "text"
    }
    texts = Message.objects.filter(kind="text", sender="scribe")
    assert sorted(str(m.id) for m in texts) == sorted(said)


def test_a_line_that_cannot_be_read_is_an_error_and_the_batch_still_lands(client, scribe, harbor):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    lines = transcript_lines()
    lines.insert(3, "{not json")
    watcher = Watcher(client, pending=lines)
    assert watcher.flush_batch().status_code == 200
    answer = watcher.results[-1]
    assert answer["imported"] + answer["skipped"] + len(answer["errors"]) == len(lines)
    assert answer["errors"] == [
        "line 3: not a JSON object (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    ]
    assert watcher.pending == []


def test_an_unclaimed_sessions_lines_are_kept_until_it_is_assigned(client, scribe, harbor):
    watcher = Watcher(client, pending=transcript_lines())
    watcher.flush_batch()
    assert watcher.results[-1]["unclaimed_sessions"] == [SESSION]
    assert Message.objects.count() == 0
    inbox = UnclaimedSession.objects.get(pk=SESSION)
    assert inbox.agent is None or inbox.agent == scribe.agent
    assign_session(inbox, harbor, scribe.agent)
    assert Message.objects.filter(motion=harbor, session_id=SESSION).exists()


class KeepingRecord(OwnRecord):
    """A record that keeps an unclaimed session's lines (as memory-lane's does), noting what it got."""

    keeps_unclaimed = True
    kept: list[tuple[str, list[str]]] = []

    def write_unclaimed(self, messages, events, session_id):
        type(self).kept.append((session_id, [str(m.id) for m in messages]))


class FailingRecord(OwnRecord):
    keeps_unclaimed = True

    def write_unclaimed(self, messages, events, session_id):
        raise RuntimeError("the host's record is away")


def test_a_record_that_keeps_unclaimed_lines_gets_them_at_once_under_the_ids_the_claim_gives(
    client, scribe, harbor, settings
):
    settings.MOTION_RUNNER_RECORD = "tests.motion_runner.memory_lane.test_memory_lane_clients.KeepingRecord"
    KeepingRecord.kept = []
    Watcher(client, pending=transcript_lines()).flush_batch()
    assert Message.objects.count() == 0  # the apps' index waits for the claim
    [(session, kept)] = KeepingRecord.kept
    assign_session(UnclaimedSession.objects.get(pk=SESSION), harbor, scribe.agent)
    indexed = set(map(str, Message.objects.filter(session_id=SESSION).values_list("pk", flat=True)))
    assert session == SESSION and kept and set(kept) == indexed


def test_a_record_that_fails_on_unclaimed_lines_still_answers_the_watcher_and_spools_them(
    client, settings, tmp_path
):
    settings.MOTION_RUNNER_RECORD = "tests.motion_runner.memory_lane.test_memory_lane_clients.FailingRecord"
    watcher = Watcher(client, pending=transcript_lines())
    assert watcher.flush_batch().status_code == 200  # else the watcher re-sends the batch forever
    assert watcher.results[-1]["unclaimed_sessions"] == [SESSION]
    assert (tmp_path / "spool" / f"{SESSION}.jsonl").exists()  # the claim reads them from here


def test_the_watchers_username_names_the_agent_in_the_inbox(client, scribe):
    Watcher(client, username="scribe", pending=transcript_lines()).flush_batch()
    assert UnclaimedSession.objects.get(pk=SESSION).agent == scribe.agent


def test_a_spooled_session_is_read_when_it_is_claimed_and_posted_again(client, scribe, harbor):
    Watcher(client, pending=transcript_lines()[:30]).flush_batch()
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    Watcher(client, pending=transcript_lines()[30:]).flush_batch()
    assert TranscriptFile.objects.filter(path__endswith=f"{SESSION}.jsonl").exists()
    assert Message.objects.filter(motion=harbor, kind="tool_call").exists()


def test_ingest_without_a_configured_key_is_a_503_the_watcher_keeps_its_lines(client, settings):
    settings.INGEST_API_KEY = ""
    watcher = Watcher(client, pending=transcript_lines())
    response = watcher.flush_batch()
    assert response.status_code == 503
    assert response.json() == {"error": "Ingest is not configured: set INGEST_API_KEY."}
    assert len(watcher.pending) == len(transcript_lines())


def test_ingest_with_a_wrong_key_is_a_401(client):
    response = Watcher(client, key="wrong", pending=transcript_lines()).flush_batch()
    assert response.status_code == 401
    assert isinstance(response.json()["error"], str)


def test_an_agent_key_is_not_an_ingest_key(client, scribe):
    response = Watcher(client, key=scribe.key, pending=transcript_lines()).flush_batch()
    assert response.status_code == 401


def test_an_empty_batch_is_a_400(client):
    response = Watcher(client, pending=[]).flush_batch()
    assert response.status_code == 400
    assert response.json()["error"] == "lines: No lines provided."


def test_a_runner_key_for_an_agent_that_does_not_exist_is_a_401_saying_so(client, settings):
    settings.MOOD_RUNNER_KEYS = {"ghost": "ghost-key"}
    AgentFactory(name="someone")
    response = mood_post(client, "/api/moods/harbor/quiet/", {"reason": "x"}, key="ghost-key")
    assert response.status_code == 401
    assert "@ghost" in response.json()["error"]


def terminal_lines(tmp_path) -> list[str]:
    """The recorded transcript as a terminal session writes it (typed prompts, cost-state lines)."""
    return recorded.terminal_transcript(tmp_path / f"{SESSION}.jsonl").read_text().splitlines()


def turn_end_costs(motion) -> list:
    return sorted(Message.objects.filter(motion=motion, kind="turn_end").values_list("cost_usd", flat=True))


def test_a_terminal_sessions_turns_cost_what_one_whole_import_says(client, scribe, harbor, tmp_path):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    Watcher(client, pending=terminal_lines(tmp_path)).flush_batch()
    assert len(turn_end_costs(harbor)) == 3  # one a cost-state line
    assert sum(turn_end_costs(harbor)) == TranscriptFile.objects.get(path=f"ingest:{SESSION}").cost_usd


def test_a_session_spooled_then_claimed_counts_each_dollar_once(client, scribe, harbor, tmp_path):
    lines = terminal_lines(tmp_path)
    first_cost = next(i for i, line in enumerate(lines) if '"cost-state"' in line)
    Watcher(client, pending=lines[: first_cost + 1]).flush_batch()  # unclaimed: spooled
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    Watcher(client, pending=lines[first_cost + 1 :]).flush_batch()
    whole = TranscriptFile.objects.get(path=f"ingest:{SESSION}").cost_usd
    costs = turn_end_costs(harbor)
    assert len(costs) == 3
    assert sum(costs) == whole


@pytest.mark.parametrize(
    "route, body", [("quiet", {"reason": "x"}), ("held", {"reason": "x", "until": None})]
)
def test_a_runner_key_for_an_agent_not_of_the_mood_is_refused_on_quiet_and_held(
    client, settings, route, body
):
    AgentFactory(name="outsider")
    settings.MOOD_RUNNER_KEYS = {"scribe": RUNNER_KEY, "outsider": "outsider-key"}
    response = mood_post(client, f"/api/moods/harbor/{route}/", body, key="outsider-key")
    assert response.status_code == 403
    assert Message.objects.count() == 0


def test_ingest_without_an_authorization_header_is_a_401(client):
    response = Watcher(client, key="", pending=transcript_lines()).flush_batch()
    assert response.status_code == 401


def test_more_lines_than_the_cap_is_a_413_and_reads_none(client, scribe, harbor, settings):
    settings.INGEST_MAX_LINES = 10
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    response = Watcher(client, pending=transcript_lines()).flush_batch()
    assert response.status_code == 413
    assert "at most 10" in response.json()["error"]
    assert Message.objects.count() == 0


def test_a_body_over_djangos_limit_is_a_413_in_memory_lanes_shape(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = Watcher(client, pending=transcript_lines()).flush_batch()
    assert response.status_code == 413
    assert "fewer lines" in response.json()["error"]


def test_anyone_reading_the_motion_sees_who_is_held_and_why(client, scribe, justin):
    mood_post(client, "/api/moods/harbor/held/", {"reason": "a turn is under way elsewhere", "until": None})
    client.force_login(justin)  # Harbor is read by signed-in people (the default visibility)
    response = client.get("/api/moods/harbor/held/")
    assert response.status_code == 200
    assert response.json()["held"]["scribe"]["reason"] == "a turn is under way elsewhere"


def test_a_lifted_hold_is_no_longer_shown(client, scribe):
    mood_post(client, "/api/moods/harbor/held/", {"reason": "waiting", "until": None})
    mood_post(client, "/api/moods/harbor/held/", {"reason": "", "until": None})
    assert client.get("/api/moods/harbor/held/", **scribe.headers).json() == {"held": {}}


def test_a_session_id_that_could_name_a_path_is_an_error_and_spools_nothing(client, tmp_path):
    line = json.dumps({"type": "user", "sessionId": "../../outside", "uuid": "x"})
    watcher = Watcher(client, pending=[line])
    watcher.flush_batch()
    assert watcher.results[-1]["error_count"] == 1
    assert not (tmp_path / "spool").exists() and not (tmp_path / "outside.jsonl").exists()
