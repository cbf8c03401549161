"""Docs true (issue 31, "What to build" 6): every path the README and docs/*.md name exists.

What counts as a path, read from the backticked spans of each file (robust, not clever):
- a path from the checkout's root (`motion_runner/ingest/writer.py`, `tests/equivalence/`,
  `bench/README.md`), or from inside an app (`sql/messages.py`, `runner/stop_bell.py`), possibly
  with a name after its module (`runner/ending.finish_turn`, `ingest/announcing.Announcer`);
- a test by its node id (`tests/wakes/money/test_wakes_budget.py::test_…`): the file, and the test in it;
- a dotted module path (`motion_runner.people.access.MotionAccess`, `ingest.EventWriter`);
- in the README's package table, each backticked bare name in a row names a module, a file or a
  name defined in that row's package (`runner/`'s `stop_bell`, `lib/`'s `stable_uuid`).
A name after a module must be defined (or imported) in it. Spans with spaces, `<…>` or `…`, URLs,
home and absolute paths are not paths; nor is a path whose first folder is not ours (memory-lane's
`conversations/models.py`, named in docs/memory-lane.md), a folder made at run time (`var/…`), a
folder named from inside an app (`api/moods/pulse/` reads as a URL) or a system check's id. A
template (`motion_runner/base.html`) is looked for where Django looks; a dotted name may also be a
registered one (the Celery task `motion_runner.import_transcripts`).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from tests.paths import ROOT

APPS = ("motion_runner", "wakes", "watchlist")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SPAN = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[\w.-]+(/[\w.-]*)+$|^[\w/.-]+\.(py|md|html|js|css|json|ts|toml|txt|yml|cfg)$")
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
BARE = re.compile(r"^[A-Za-z_]\w*(\.[a-z]{1,4}|/)?$")
RUNTIME = {"var"}  # made by the running apps, not in the checkout
CHECK_ID = re.compile(r"\.[CEIW]\d{3}$")


def roots() -> set[str]:
    """The checkout's own top-level folders: a path starting with one of them starts at the root."""
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    return folders - {"node_modules"}


@cache
def template_folders() -> list[Path]:
    return [ROOT / "templates", *(ROOT / app / "templates" for app in APPS)]


@cache
def app_sources() -> str:
    return "\n".join(source(file) for app in APPS for file in sorted((ROOT / app).rglob("*.py")))


@cache
def app_packages() -> dict[str, list[Path]]:
    """Each folder name inside an app (`sql`, `runner`, `models`, `kinds`) → where it is."""
    found: dict[str, list[Path]] = {}
    for app in APPS:
        for folder in (ROOT / app).rglob("*"):
            if folder.is_dir() and "__pycache__" not in folder.parts and "migrations" not in folder.parts:
                found.setdefault(folder.name, []).append(folder)
    return found


@cache
def source(path: Path) -> str:
    return path.read_text(errors="replace")


def defines(module: Path, name: str) -> bool:
    """`name` is defined, assigned or imported at the top of `module` (a .py file, or a package's
    files): a local variable of that name is not it."""
    files = sorted(module.rglob("*.py")) if module.is_dir() else [module]
    name = re.escape(name)
    pattern = re.compile(
        rf"^(async\s+def|def|class)\s+{name}\b|^{name}\s*[:=]"
        rf"|^(from\s+\S+\s+)?import\b[^\n]*\b{name}\b|^\s+{name},?\s*(#.*)?$",
        re.MULTILINE,
    )
    return any(pattern.search(source(file)) for file in files)


def resolves(base: Path, parts: list[str]) -> bool:
    """`parts` (a path's segments, the last maybe `module.name`) exists under `base`."""
    *folders, last = parts
    where = base.joinpath(*folders)
    if last == "" or (where / last).exists():
        return where.exists() and (last == "" or (where / last).exists())
    module, _, name = last.partition(".")
    if not name or module.endswith(("py",)) and not (where / module).exists():
        return False
    for candidate in (where / f"{module}.py", where / module):
        if candidate.exists():
            return defines(candidate, name.split(".")[0]) or (candidate / f"{name.split('.')[0]}.py").exists()
    return False


def path_exists(span: str) -> bool | None:
    """Whether a path-like span exists; None when it is not one of ours."""
    span = re.sub(r"(:\d+)+$|#.*$", "", span)
    if span.startswith(("/", "~", ".", "http")) or "://" in span:
        return None
    parts = span.split("/")
    if span.endswith(".html") and any((folder / span).exists() for folder in template_folders()):
        return True
    if parts[0] in RUNTIME:
        return None
    if parts[0] in roots():
        return resolves(ROOT, parts)
    if parts[0] in app_packages() and len(parts) > 1 and parts[-1]:
        return any(resolves(folder.parent, parts) for folder in app_packages()[parts[0]])
    return None


def dotted_exists(span: str) -> bool | None:
    """Whether a dotted module path (`motion_runner.x.y`, `ingest.EventWriter`) exists; None when
    it does not start at an app or a folder of one."""
    parts = span.split(".")
    if CHECK_ID.search(span):
        return None
    if parts[0] in APPS:
        bases = [ROOT]
    elif parts[0] in app_packages():
        bases = [folder.parent for folder in app_packages()[parts[0]]]
    else:
        return None
    for base in bases:
        where = base
        for at, part in enumerate(parts):
            if (where / part).is_dir():
                where = where / part
                continue
            if (where / f"{part}.py").exists():
                rest = parts[at + 1 :]
                if not rest or defines(where / f"{part}.py", rest[0]):
                    return True
                break
            if at > 0 and defines(where, part):
                return True
            break
        else:
            return True
    return f'"{span}"' in app_sources()  # a registered name (a task, a dotted-path setting)


def node_exists(span: str) -> bool | None:
    """Whether a test's node id (`tests/x.py::test_y[case]`) names a test function of that file."""
    path, _, name = span.partition("::")
    if path_exists(path) is not True:
        return path_exists(path)
    name = name.split("[")[0].split("::")[-1]
    return (
        re.search(rf"^\s*(async\s+)?def\s+{re.escape(name)}\b", source(ROOT / path), re.MULTILINE) is not None
    )


def spans(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, match.start()) + 1, match.group(1).strip()) for match in SPAN.finditer(text)]


def missing_in(doc: Path) -> list[str]:
    text = source(doc)
    table_lines = {number for number, _, _ in package_table_rows(text)} if doc.name == "README.md" else set()
    missing = []
    for line, span in spans(text):
        if line in table_lines:
            continue  # missing_in_package_table reads them, from their package
        if " " in span or "<" in span or "…" in span or "*" in span:
            continue
        found = None
        if "::" in span:
            found = node_exists(span)
        elif PATHLIKE.match(span):
            found = path_exists(span)
        elif DOTTED.match(span) and not re.search(r"\.(py|md|html|json|toml)$", span):
            found = dotted_exists(span)
        if found is False:
            missing.append(f"{doc.relative_to(ROOT)}:{line}: `{span}`")
    return missing


def package_table_rows(text: str) -> list[tuple[int, str, str]]:
    """(line, package folder, the row's description) for each README table row whose first cell
    is one backticked folder of ours (`motion_runner/runner/`)."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and (first := re.fullmatch(r"`([\w/]+/)`", cells[0])):
            if first.group(1).split("/")[0] in roots():
                rows.append((number, first.group(1), "|".join(cells[1:])))
    return rows


def missing_in_package_table() -> list[str]:
    readme = ROOT / "README.md"
    missing = []
    for number, package, description in package_table_rows(source(readme)):
        folder = ROOT / package
        for _, span in spans(description):
            if " " in span or "<" in span or "…" in span or not folder.is_dir():
                continue
            if "/" in span and PATHLIKE.match(span):
                if not (resolves(folder, span.split("/")) or path_exists(span) is not False):
                    missing.append(f"README.md:{number}: `{span}` in `{package}`")
                continue
            if not BARE.match(span):
                continue
            name = span.rstrip("/")
            if (folder / span).exists() or any(folder.rglob(span)) or any(folder.rglob(f"{name}.py")):
                continue
            if defines(folder, name.split(".")[0]):
                continue
            if name.isupper() and defines(ROOT / "motion_runner", name):  # a setting, in an app's conf
                continue
            missing.append(f"README.md:{number}: `{span}` in `{package}`")
    return missing


def test_every_path_the_readme_and_docs_name_exists():
    missing = [entry for doc in DOCS for entry in missing_in(doc)] + missing_in_package_table()
    assert not missing, "The docs name paths that do not exist:\n" + "\n".join(missing)


def test_each_form_of_a_wrong_name_is_caught_and_each_right_one_passes():
    assert path_exists("motion_runner/ingest/writer.py") is True
    assert path_exists("sql/messages.py") is True
    assert path_exists("runner/ending.finish_turn") is True
    assert path_exists("runner/ending.no_such_function") is False
    assert path_exists("motion_runner/no_such_module.py") is False
    assert path_exists("conversations/models.py") is None  # memory-lane's, not ours
    assert dotted_exists("motion_runner.people.access.MotionAccess") is True
    assert dotted_exists("motion_runner.people.no_such_module") is False
    assert dotted_exists("ingest.EventWriter") is True
    assert dotted_exists("select_for_update().order_by") is None
    assert node_exists(
        "tests/motion_runner/site/test_docs_paths.py::test_every_path_the_readme_and_docs_name_exists"
    )
    assert node_exists("tests/motion_runner/site/test_docs_paths.py::test_no_such_test") is False


def test_every_package_of_the_apps_says_what_it_owns():
    """Each package's `__init__` has a docstring (Django's `management/` plumbing aside)."""
    silent = [
        str(init.relative_to(ROOT))
        for app in APPS
        for init in sorted((ROOT / app).rglob("__init__.py"))
        if not {"migrations", "management"} & set(init.parts)
        and ast.get_docstring(ast.parse(source(init))) is None
    ]
    assert not silent, "Packages that do not say what they own:\n" + "\n".join(silent)


MEASURED = re.compile(r"\d\s?(ms|µs|us|MB/s|events/s|lines/s|x faster|× faster)\b")


def test_no_measured_figure_is_kept_in_the_apps_code():
    """A figure lives in bench/README.md with its date and load, never in a comment or docstring,
    where it goes stale unseen."""
    figures = [
        f"{file.relative_to(ROOT)}:{number}: {line.strip()}"
        for app in APPS
        for file in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in file.parts
        for number, line in enumerate(source(file).splitlines(), start=1)
        if MEASURED.search(line)
    ]
    assert not figures, "Figures in the apps' code (keep them in bench/README.md):\n" + "\n".join(figures)
