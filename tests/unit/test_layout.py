"""The walls between the parts, checked from the source (parsed with ``ast``, never imported).

Rules (a failure names the rule and the offending import as ``file:line``):

- **engine-is-leaf**: no module under ``memory_core/engine/`` imports the store, harness,
  conflicts, knowledge, agent, cli or dashboard packages, or Streamlit; nor an NLP runtime
  (spaCy, onnxruntime, onnx) or MiniLM's other runners (``embedding.bfloat16``,
  ``.onnx_export``, ``.onnx_minilm``, ``.phrase_twin``): the vectors it stores come from the
  float32 model it is given, never from a classifier's twin.
- **context-is-its-own-room**: ``memory_core/context/`` (the task context graph) imports
  none of the conflicts, store, dashboard, harness, cli, agent or knowledge packages, nor
  Streamlit; the engine does not import it (the agent loop does).
- **streamlit-in-ui-only**: only ``memory_core/dashboard/ui/``, ``pages/`` and ``app.py``
  import Streamlit.
- **pages-use-public-api**: ``pages/`` import only the public modules of ``memory_core``:
  ``PAGE_API_MODULES`` and ``PAGE_API_PREFIXES`` below: the package root, ``errors`` and
  ``paths`` (where the data folder is), the faces of the parts (``memory_core.conflicts``,
  ``.knowledge``, ``.harness``, ``.embedding``: their ``__init__`` and its ``__all__``, never
  a module inside them) and the dashboard's own modules (``memory_core.dashboard.**``, which
  exist to serve the pages); never a module whose name has a private ``_x`` part.
- **no-import-cycles**: the module import graph of ``memory_core`` has no cycle, and
  neither has the graph of its parts (``engine``, ``store``, ``harness``, ...: a module of
  one part importing a module of another is an edge between the parts). Imports inside
  functions count (a lazy import only defers a cycle), and so does a module loaded by a
  literal name (``importlib.import_module("memory_core.x")``); ``if TYPE_CHECKING:``
  imports do not (they never run).

No exemptions are needed today; one would be listed here with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "memory_core"

ENGINE_FORBIDDEN = (
    *(f"memory_core.{name}" for name in ("store", "harness", "conflicts", "knowledge")),
    *(f"memory_core.{name}" for name in ("agent", "cli", "dashboard", "context")),
    *(f"memory_core.embedding.{name}" for name in ("bfloat16", "onnx_export", "onnx_minilm")),
    "memory_core.embedding.phrase_twin",
    *("streamlit", "spacy", "onnxruntime", "onnx"),
)
CONTEXT_FORBIDDEN = (
    *(f"memory_core.{name}" for name in ("conflicts", "store", "dashboard", "harness", "cli")),
    *(f"memory_core.{name}" for name in ("agent", "knowledge")),
    "streamlit",
)
STREAMLIT_ALLOWED = ("memory_core/dashboard/ui/", "pages/", "app.py")
PAGE_API_MODULES = frozenset(
    {"memory_core", "memory_core.errors", "memory_core.paths"}
    | {f"memory_core.{face}" for face in ("conflicts", "knowledge", "harness", "embedding")}
)
PAGE_API_PREFIXES = ("memory_core.dashboard",)


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's target module, where it stands and whether it runs."""

    source: str  # path relative to the repository root
    line: int
    module: str  # the imported module, resolved to a module file where one exists

    def where(self) -> str:
        return f"{self.source}:{self.line} imports {self.module}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that can run: the bodies of ``if TYPE_CHECKING:`` are skipped."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child):
                assert isinstance(child, ast.If)
                stack.extend(child.orelse)
            else:
                stack.append(child)


def imports_of(path: Path, known: dict[str, Path]) -> list[Import]:
    """The modules ``path`` imports at run time (lazy in-function imports included)."""
    source = path.relative_to(ROOT).as_posix()
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: list[Import] = []
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), source)):
        if by_name := _loaded_by_name(node):
            found.append(Import(source, getattr(node, "lineno", 0), by_name))
        elif isinstance(node, ast.Import):
            found += [Import(source, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(source, node.lineno, sub if sub in known else base))
    return found


def _loaded_by_name(node: ast.AST) -> str | None:
    """``import_module("a.b")`` / ``__import__("a.b")`` with a literal name: ``"a.b"``."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    if name in ("import_module", "__import__") and isinstance(first, ast.Constant):
        return str(first.value)
    return None


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def _sources(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern))


def test_engine_is_leaf() -> None:
    known = package_modules()
    broken = [
        imp.where()
        for path in _sources("memory_core/engine/**/*.py")
        for imp in imports_of(path, known)
        if any(_under(imp.module, banned) for banned in ENGINE_FORBIDDEN)
    ]
    assert not broken, "rule engine-is-leaf broken:\n" + "\n".join(sorted(set(broken)))


def test_context_is_its_own_room() -> None:
    known = package_modules()
    broken = [
        imp.where()
        for path in _sources("memory_core/context/**/*.py")
        for imp in imports_of(path, known)
        if any(_under(imp.module, banned) for banned in CONTEXT_FORBIDDEN)
    ]
    assert not broken, "rule context-is-its-own-room broken:\n" + "\n".join(sorted(set(broken)))


def test_streamlit_in_ui_only() -> None:
    known = package_modules()
    broken = [
        imp.where()
        for path in _sources("memory_core/**/*.py", "pages/*.py", "app.py")
        for imp in imports_of(path, known)
        if _under(imp.module, "streamlit") and not imp.source.startswith(STREAMLIT_ALLOWED)
    ]
    assert not broken, "rule streamlit-in-ui-only broken:\n" + "\n".join(sorted(set(broken)))


def test_pages_use_public_api() -> None:
    known = package_modules()
    broken = [
        imp.where()
        for path in _sources("pages/*.py")
        for imp in imports_of(path, known)
        if _under(imp.module, "memory_core")
        and (
            _private(imp.module)
            or not (
                imp.module in PAGE_API_MODULES
                or any(_under(imp.module, p) for p in PAGE_API_PREFIXES)
            )
        )
    ]
    assert not broken, "rule pages-use-public-api broken:\n" + "\n".join(sorted(set(broken)))


def import_graph() -> dict[str, list[Import]]:
    """Module -> its imports of other ``memory_core`` modules."""
    known = package_modules()
    return {
        name: [imp for imp in imports_of(path, known) if imp.module in known and imp.module != name]
        for name, path in known.items()
    }


def find_cycle(graph: dict[str, list[Import]]) -> list[Import] | None:
    """One cycle as the imports that close it, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path: list[Import] = []
        stack: list[tuple[str, Iterator[Import]]] = [(start, iter(graph[start]))]
        state[start] = 1
        while stack:
            node, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                state[node] = 2
                stack.pop()
                if path:
                    path.pop()
                continue
            target = step.module
            if state.get(target) == 1:
                names = [name for name, _ in stack]
                return [*path[names.index(target) :], step]
            if not state.get(target):
                state[target] = 1
                path.append(step)
                stack.append((target, iter(graph[target])))
    return None


def part_graph(graph: dict[str, list[Import]]) -> dict[str, list[Import]]:
    """The parts of the package (``memory_core.engine``, ``memory_core.errors``, ...) and,
    for each, one import per other part it uses."""

    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])

    parts: dict[str, dict[str, Import]] = {part(name): {} for name in graph}
    for name, imports in graph.items():
        for imp in imports:
            if part(imp.module) != part(name):
                parts[part(name)].setdefault(
                    part(imp.module), Import(imp.source, imp.line, part(imp.module))
                )
    return {name: list(edges.values()) for name, edges in parts.items()}


def test_no_import_cycles() -> None:
    graph = import_graph()
    for level, cycle in (("modules", find_cycle(graph)), ("parts", find_cycle(part_graph(graph)))):
        assert cycle is None, f"rule no-import-cycles broken between {level}:\n" + "\n".join(
            i.where() for i in cycle
        )


def test_the_checks_see_imports() -> None:
    """The parser itself: lazy imports count, TYPE_CHECKING ones do not, relative ones resolve."""
    known = package_modules()
    graph = import_graph()
    assert any(i.module == "memory_core.engine.config" for i in graph["memory_core"])
    path = PACKAGE / "cli" / "harness_args.py"
    modules = {i.module for i in imports_of(path, known)}
    assert "memory_core.harness.policies" in modules  # imported inside a function
    assert "memory_core.harness.session_format" not in modules  # under TYPE_CHECKING only
    cyclic = {
        "a": [Import("a.py", 1, "b")],
        "b": [Import("b.py", 2, "c")],
        "c": [Import("c.py", 3, "a")],
    }
    assert [i.where() for i in find_cycle(cyclic) or []] == [
        "a.py:1 imports b",
        "b.py:2 imports c",
        "c.py:3 imports a",
    ]
    assert find_cycle({"a": [Import("a.py", 1, "b")], "b": []}) is None
    by_name = ast.parse("import importlib\nimportlib.import_module('memory_core.store')")
    assert [_loaded_by_name(n) for n in ast.walk(by_name) if _loaded_by_name(n)] == [
        "memory_core.store"
    ]


def test_boundary_imports_only_the_errors() -> None:
    """rule boundary-is-leaf: the reader of outside files and the message quoting helpers
    serve every part, so they import no part of ``memory_core`` but ``errors``."""
    known = package_modules()
    broken = [
        imp.where()
        for path in _sources("memory_core/boundary/**/*.py")
        for imp in imports_of(path, known)
        if _under(imp.module, "memory_core")
        and not _under(imp.module, "memory_core.boundary")
        and imp.module != "memory_core.errors"
    ]
    assert not broken, "rule boundary-is-leaf broken:\n" + "\n".join(sorted(set(broken)))
