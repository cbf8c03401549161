"""Issue 10: schemathesis against /api/schema/, bounded and deterministic: no request the schema
allows (or a mangled one) gets a 5xx, and each answer is one the schema documents.

The caller is @scribe with its key, an agent of Harbor, so the fuzzed requests reach past the
access checks. A fixed number of derandomized examples per operation keeps CI within a minute.
(schemathesis's own pytest plugin does not run under this pytest, so each operation's strategy
is driven by hypothesis here.)
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

# CI's depth; SCHEMA_FUZZ_EXAMPLES and SCHEMA_FUZZ_STATEFUL_EXAMPLES run deeper by hand.
EXAMPLES_PER_OPERATION = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", 30))
INGEST_KEY = "an-ingest-key-the-fuzzer-does-not-know"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_schema():
    # As Django's test client does: the test's own connection (and transaction) must outlive
    # each request instead of being closed when it finishes.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def in_harbor(case):
    """The same request aimed at the Motion the caller belongs to, so it gets past the 404."""
    if case.path_parameters and "slug" in case.path_parameters:
        case.path_parameters["slug"] = "harbor"
    return case


def fuzz(operation, headers: dict[str, str], *, pin=lambda case: case) -> None:
    @given(case=operation.as_strategy().map(pin))
    @hypothesis_settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()


def test_no_5xx_and_every_answer_is_documented(api_schema, scribe, harbor, settings):
    # memory-lane's ingest answers 503 while no key is configured, by its contract: configure one.
    settings.INGEST_API_KEY = INGEST_KEY
    failures = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    for operation in operations:
        try:
            fuzz(operation, {"Authorization": f"Bearer {scribe.key}"})
            if "{slug}" in operation.path:
                fuzz(operation, {"Authorization": f"Bearer {scribe.key}"}, pin=in_harbor)
            if operation.path == "/api/ingest/":  # the watcher's key, as memory-lane sends it
                fuzz(operation, {"Authorization": f"Bearer {INGEST_KEY}"})
        except (Exception, BaseExceptionGroup) as exc:  # every operation is tried; all failures are shown
            failures.append(f"{operation.label}: {str(exc)[:1500]}")

    assert len(operations) >= 15
    assert not failures, "\n\n".join(failures)


# --- the stateful phase (issue 20, item 15): sequences that follow the schema's links ------------

STATEFUL_EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_STATEFUL_EXAMPLES", 20))
STATEFUL_STEPS = 6


@pytest.mark.parametrize("caller", ["agent", "anonymous"])
def test_sequences_that_follow_the_links_answer_as_documented(api_schema, scribe, harbor, settings, caller):
    """schemathesis's stateful phase: e.g. a watch made, then read, changed, paused and deleted by
    the id its answer gave; a Motion listed, then its messages read and posted to. The links are
    schemathesis's own inference from the schema (56 transitions), each answer checked as above,
    a fixed number of derandomized runs."""
    settings.INGEST_API_KEY = INGEST_KEY
    machine = api_schema.as_state_machine()
    assert api_schema.statistic.transitions.total >= 40  # the phase is no empty walk
    headers = {"Authorization": f"Bearer {scribe.key}"} if caller == "agent" else {}

    class AsTheCaller(machine):
        def get_call_kwargs(self, case):
            return {"headers": headers}

        def validate_response(self, response, case, **kwargs):
            case.validate_response(response, checks=CHECKS)

    AsTheCaller.run(
        settings=hypothesis_settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=STATEFUL_STEPS,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
    )
