"""Where things are, for tests in any folder: the checkout's root and the tests folder."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
