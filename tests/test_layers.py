"""Imports run one way, and there is no import circle: the layers of docs/development.md.

Lowest first; a module may import its own layer and the layers below, never one above:

    tasks_app  <-  base (annotation.protocol, ...)  <-  annotation.models  <-  annotation.services
               <-  annotation.reporting  <-  entry points (api, views, admin, commands, URLs, Celery tasks, ...)

The check reads the source (the AST of every module under annotation/ and tasks_app/, migrations
included), so it sees every import: at the top, inside a function, under ``if TYPE_CHECKING:``.
An import under TYPE_CHECKING counts for the direction (a lower layer does not name the types of a
higher one either) but not for circles (it never runs, so it cannot make an import loop).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotation", "tasks_app")

# Lowest first. A module belongs to the layer of its longest matching prefix (a prefix matches the
# module itself and everything under it); a module of ours that matches none fails the test, so a
# new top-level module is placed here (and in docs/development.md) when it is added.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("tasks_app", ("tasks_app",)),
    (
        "base",
        (
            "annotation.protocol",  # the protocol's vocabulary: states, outcome kinds, validators
            "annotation.errors",  # ServiceError, the base of every service's refusal
            "annotation.settings.env",  # strict environment parsing (the settings read it)
            "annotation.settings.logformat",  # the JSON log format (named in LOGGING)
            "annotation.db.errors",  # which database errors mean "the database is away"
            "annotation.celery",  # the Celery app (annotation/__init__ imports it)
        ),
    ),
    ("models", ("annotation.models", "annotation.migrations")),
    ("services", ("annotation.services",)),
    ("reporting", ("annotation.reporting",)),
    ("rehearsal", ("annotation.rehearsal",)),  # a whole study on a scratch database: drives the layers below
    (
        "entry points",
        (
            "annotation.api",
            "annotation.views",
            "annotation.admin",
            "annotation.management",
            "annotation.urls",
            "annotation.urls_dashboard",
            "annotation.urls_entry",
            "annotation.urls_worker",
            "annotation.background",  # the Celery tasks of the study machinery: each calls one service
            "annotation.reporting.celery_tasks",
            "annotation.settings",
            "annotation.apps",
            "annotation.asgi",
            "annotation.wsgi",
            "annotation.web",  # the HTTP layer's helpers: they read requests, write responses or wrap views
            "annotation.db.sqlite_queue",  # one writer at a time on SQLite, around each request
        ),
    ),
]
# The package's own __init__ (it loads the Celery app) sits in the base layer.
EXACT = {"annotation": "base", "annotation.db": "base"}

# Inside the services layer, each capability is a sub-package of annotation.services (jobs.py, the
# background-job machinery, is one by itself). A capability may import those named here, never
# another; the table has no circle, so neither can the imports. Kept as docs/development.md's
# "Capabilities" table says, and in each sub-package's docstring.
CAPABILITIES: dict[str, tuple[str, ...]] = {
    "state": (),  # the bottom: participation states, slots, outcomes and codes, platform parameters
    "texts": (),  # a study's worker-facing texts and the language a worker sees
    "money": (),  # the pay rule
    "jobs": (),  # background jobs: claim, heartbeat, progress, recovery
    # the audit trail: every capability that carries out a staff action records it there, so it sits
    # just above state (whose keyed hash names a participant) and below every such capability
    "audit": ("state",),
    "verdicts": ("state", "audit"),
    "admission": ("state", "texts", "money", "audit"),  # money: a close-out is dated at the pay rule's end of work
    "session": ("state", "texts", "verdicts", "admission"),
    "studies": ("state", "texts", "verdicts", "admission", "session", "audit"),
    "roles": (),  # who on the team may do what: each operation's permission, the background jobs' check
    "prolific": ("state", "money", "admission", "jobs", "roles", "audit"),
    "rights": ("state", "prolific", "audit"),  # participants' rights: withdrawal, subject access, retention
}
# At most this many modules directly under annotation/: its face (__init__, apps, asgi, celery,
# the urls modules, wsgi) and the base error; everything else lives in a package.
TOP_LEVEL_MODULES = 11

# Known arrows that other changes remove; each is checked to still exist, so it is deleted with them.
ALLOWED: dict[tuple[str, str], str] = {}


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_modules(root: Path) -> dict[str, Path]:
    return {module_name(root, p): p for package in PACKAGES for p in sorted((root / package).rglob("*.py"))}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
        if name == "TYPE_CHECKING":
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def imports(root: Path, modules: dict[str, Path]) -> list[tuple[str, str, int, bool]]:
    """(importer, imported module, line, under TYPE_CHECKING) for every import of our own modules."""
    found = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        typing_only = _type_checking_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*base, node.module] if node.module else base)
                else:
                    source = node.module or ""
                # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name`` imports mod.
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source for alias in node.names
                ]
            for target in targets:
                while target and target not in modules:  # ``import a.b.name`` -> the module a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.append((name, target, node.lineno, id(node) in typing_only))
    return found


def layer_of(module: str) -> int | None:
    if module in EXACT:
        return next(i for i, (layer, _) in enumerate(LAYERS) if layer == EXACT[module])
    best: tuple[int, int] | None = None  # (prefix length, layer index)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def upward_arrows(found: list[tuple[str, str, int, bool]]) -> list[str]:
    wrong = []
    for importer, imported, line, _ in found:
        if (importer, imported) in ALLOWED:
            continue
        low, high = layer_of(importer), layer_of(imported)
        assert low is not None and high is not None
        if high > low:
            wrong.append(
                f"{importer} (line {line}, layer {LAYERS[low][0]}) imports {imported} (layer {LAYERS[high][0]})"
            )
    return wrong


def circles(found: list[tuple[str, str, int, bool]]) -> list[list[str]]:
    """The import circles (strongly connected components of more than one module), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for importer, imported, _, typing_only in found:
        if not typing_only and (importer, imported) not in ALLOWED:
            graph[importer].add(imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


@pytest.fixture(scope="module")
def found() -> list[tuple[str, str, int, bool]]:
    return imports(ROOT, find_modules(ROOT))


def test_every_module_has_a_layer():
    unplaced = [m for m in find_modules(ROOT) if layer_of(m) is None]
    assert not unplaced, f"place these modules in a layer of tests/test_layers.py (and docs/development.md): {unplaced}"


def test_no_import_points_up_a_layer(found):
    assert not upward_arrows(found), "\n".join(upward_arrows(found))


def test_there_is_no_import_circle(found):
    assert not circles(found), circles(found)


def test_tasks_app_imports_nothing_of_annotation(found):
    assert not [(a, b) for a, b, _, _ in found if a.startswith("tasks_app") and b.startswith("annotation")]


def test_the_allowed_exceptions_are_still_needed(found):
    edges = {(a, b) for a, b, _, _ in found}
    stale = [edge for edge in ALLOWED if edge not in edges]
    assert not stale, f"these imports are gone: delete them from ALLOWED in tests/test_layers.py: {stale}"


def _write(root: Path, module: str, source: str) -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in [path.parent, *path.parent.parents]:
        if parent == root:
            break
        (parent / "__init__.py").touch()
    path.write_text(source)


def capability_of(module: str) -> str | None:
    """The capability of a module under annotation.services (None for the package itself and outside)."""
    parts = module.split(".")
    if parts[:2] != ["annotation", "services"] or len(parts) < 3:
        return None
    return parts[2]


def capability_violations(found: list[tuple[str, str, int, bool]], table: dict[str, tuple[str, ...]]) -> list[str]:
    wrong = []
    for importer, imported, line, _ in found:
        low, high = capability_of(importer), capability_of(imported)
        if low is None or high is None or low == high:
            continue
        if low not in table or high not in table[low]:
            wrong.append(f"{importer} (line {line}, capability {low}) imports {imported} (capability {high})")
    return wrong


def capability_circles(found: list[tuple[str, str, int, bool]]) -> list[list[str]]:
    """Circles between capabilities: the import graph collapsed to one node per capability."""
    collapsed = []
    for importer, imported, line, typing_only in found:
        low, high = capability_of(importer), capability_of(imported)
        if low and high and low != high:
            collapsed.append((f"annotation.services.{low}", f"annotation.services.{high}", line, typing_only))
    return circles(collapsed)


def test_every_service_module_is_in_a_capability_of_the_table():
    modules = find_modules(ROOT)
    services = [m for m in modules if m.startswith("annotation.services.")]
    assert services
    loose = [
        m
        for m in services
        if m.count(".") == 2 and modules[m].name != "__init__.py" and m != "annotation.services.jobs"
    ]
    assert not loose, f"a module directly under annotation/services/ belongs in a capability's package: {loose}"
    unknown = sorted({capability_of(m) for m in services} - set(CAPABILITIES))
    assert not unknown, f"add these capabilities to CAPABILITIES (and docs/development.md): {unknown}"


def test_a_capability_imports_only_what_the_table_allows(found):
    assert not capability_violations(found, CAPABILITIES), "\n".join(capability_violations(found, CAPABILITIES))


def test_there_is_no_circle_between_capabilities(found):
    assert not capability_circles(found), capability_circles(found)
    table = [(f"c.{a}", f"c.{b}", 0, False) for a, callees in CAPABILITIES.items() for b in callees]
    assert not circles(table), "the allowed-calls table itself has a circle"


def test_the_package_keeps_only_its_face_at_the_top():
    top = sorted(p.name for p in (ROOT / "annotation").glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, top


def test_the_capability_check_finds_a_forbidden_call_and_a_circle(tmp_path):
    _write(tmp_path, "annotation.services.state.lifecycle", "from annotation.services.prolific import places\n")
    _write(tmp_path, "annotation.services.prolific.places", "from annotation.services.state import slots\n")
    _write(tmp_path, "annotation.services.state.slots", "")
    _write(
        tmp_path, "annotation.services.verdicts.rule", "def f():\n    from annotation.services.session import steps\n"
    )
    _write(tmp_path, "annotation.services.session.steps", "from annotation.services.verdicts import rule\n")
    found = imports(tmp_path, find_modules(tmp_path))
    wrong = capability_violations(found, CAPABILITIES)
    assert len(wrong) == 2, wrong
    assert any("annotation.services.state.lifecycle (line 1, capability state)" in w and "prolific" in w for w in wrong)
    assert any("capability verdicts" in w and "annotation.services.session.steps" in w for w in wrong)
    assert sorted(map(tuple, capability_circles(found))) == [
        ("annotation.services.prolific", "annotation.services.state"),
        ("annotation.services.session", "annotation.services.verdicts"),
    ]


def test_the_check_sees_deferred_typing_and_relative_imports_going_up(tmp_path):
    _write(tmp_path, "tasks_app.models", "")
    _write(tmp_path, "annotation.services.outcomes", "")
    _write(tmp_path, "annotation.reporting.pay", "")
    _write(tmp_path, "annotation.models.study", "def save():\n    from annotation.services import outcomes\n")
    _write(
        tmp_path,
        "annotation.services.ops",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..reporting.pay import CENT\n",
    )
    _write(tmp_path, "annotation.protocol.states", "import annotation.models.study\n")
    wrong = upward_arrows(imports(tmp_path, find_modules(tmp_path)))
    assert len(wrong) == 3
    assert any(
        "annotation.models.study (line 2, layer models) imports annotation.services.outcomes" in w for w in wrong
    )
    assert any("annotation.services.ops" in w and "annotation.reporting.pay" in w for w in wrong)
    assert any("annotation.protocol.states" in w for w in wrong)


def test_the_check_finds_a_circle_through_a_deferred_import_but_not_a_typing_one(tmp_path):
    _write(tmp_path, "annotation.services.a", "from annotation.services import b\n")
    _write(tmp_path, "annotation.services.b", "def f():\n    from annotation.services.c import x\n")
    _write(tmp_path, "annotation.services.c", "from . import a\n")
    _write(
        tmp_path, "tasks_app.models", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .texts import T\n"
    )
    _write(tmp_path, "tasks_app.texts", "from tasks_app.models import Task\n")
    assert circles(imports(tmp_path, find_modules(tmp_path))) == [
        ["annotation.services.a", "annotation.services.b", "annotation.services.c"]
    ]
