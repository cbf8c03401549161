"""redaction.redacted_logging: a host's own LOGGING kept whole, every line it logs redacted (the
README's settings block; the host project's run is in tests/motion_runner/memory_lane/test_memory_lane_record.py)."""

from __future__ import annotations

import logging
import logging.config

from motion_runner.ingest.redaction import redacted_logging

SECRET = "sk-ant-api03-" + "Q" * 40

MEMORY_LANES_OWN = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "verbose": {"format": "{levelname} {name}: {message}", "style": "{"},
        "json": {"()": "logging.Formatter", "fmt": "json %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "verbose"},
        "requests": {"class": "logging.StreamHandler"},
        "audit": {"class": "logging.StreamHandler", "formatter": "json"},
    },
    "loggers": {
        "conversations": {"handlers": ["console"], "level": "INFO"},
        "django.request": {"handlers": ["requests"], "level": "ERROR"},
    },
}


def formatted(config: dict, name: str, message: str) -> str:
    """What the formatter `name` of `config` makes of one line, built as dictConfig builds it."""
    formatter = logging.config.DictConfigurator({}).configure_formatter(dict(config["formatters"][name]))
    record = logging.LogRecord("conversations", logging.WARNING, __file__, 1, message, (), None)
    return formatter.format(record)


def test_the_hosts_loggers_handlers_and_levels_are_kept():
    config = redacted_logging(MEMORY_LANES_OWN)
    assert config["loggers"] == MEMORY_LANES_OWN["loggers"]
    assert set(config["handlers"]) == {"console", "requests", "audit"}
    assert config["handlers"]["console"]["formatter"] == "verbose"


def test_each_of_the_hosts_formatters_redacts_in_its_own_format():
    config = redacted_logging(MEMORY_LANES_OWN)
    assert formatted(config, "verbose", f"key {SECRET}") == "WARNING conversations: key [REDACTED]"
    assert formatted(config, "json", f"key {SECRET}") == "json key [REDACTED]"


def test_a_handler_without_a_formatter_gets_the_redacting_one():
    config = redacted_logging(MEMORY_LANES_OWN)
    handler = config["handlers"]["requests"]
    assert SECRET not in formatted(config, handler["formatter"], f"a request with {SECRET}")


def test_the_hosts_own_dict_is_left_as_it_was():
    before = repr(MEMORY_LANES_OWN)
    redacted_logging(MEMORY_LANES_OWN)
    assert repr(MEMORY_LANES_OWN) == before


def test_applied_twice_it_redacts_once_and_wraps_nothing_twice():
    once = redacted_logging(MEMORY_LANES_OWN)
    assert redacted_logging(once) == once


def test_a_host_without_logging_gets_a_redacting_console_on_the_root():
    config = redacted_logging(None)
    assert config["root"] == {"handlers": ["console"], "level": "INFO"}
    assert formatted(config, config["handlers"]["console"]["formatter"], SECRET) == "[REDACTED]"
