"""The import structure of ``dpsynth/``: layers, no cycles, no imports inside functions.

Every module belongs to one layer (the longest prefix in :data:`LAYERS`); a
module may import from its own layer and the layers below, never from one
above.  Importing ``dpsynth.a.b`` also runs ``dpsynth/a/__init__.py``, so an
import of a package's module counts as an import of the package too.  The
release strategies and the samplers share a layer and never import each
other: both build on the model layer.  An import inside a function is
allowed only for an optional dependency (:data:`OPTIONAL`); anything else
would be a cycle dodged at run time.  ``doc/contributing.rst`` describes
the same layers.
"""

import ast
from pathlib import Path

import pytest

import dpsynth

PACKAGE = Path(dpsynth.__file__).parent

#: Lowest first.  Within a layer, packages may import each other (no cycles).
LAYERS = [
    ("foundations", ["dpsynth._version", "dpsynth.exceptions", "dpsynth._core", "dpsynth.utils"]),
    ("primitives", ["dpsynth.mechanisms", "dpsynth.schema", "dpsynth.accounting",
                    "dpsynth.covering", "dpsynth.metrics"]),
    ("encoding", ["dpsynth.preprocessing", "dpsynth.engines"]),
    ("model", ["dpsynth.model", "dpsynth.views"]),
    ("aggregates", ["dpsynth.aggregates"]),
    ("strategies", ["dpsynth.release", "dpsynth.sampling", "dpsynth.engines.dask"]),
    ("estimators", ["dpsynth.constraints", "dpsynth.synthesizer", "dpsynth.local",
                    "dpsynth.estimator_checks"]),
    ("applications", ["dpsynth.model_selection", "dpsynth.report", "dpsynth.io",
                      "dpsynth.datasets"]),
    ("interface", ["dpsynth.cli", "dpsynth.__main__", "dpsynth"]),
]

#: Packages of one layer that must not import each other.
INDEPENDENT = [("dpsynth.release", "dpsynth.sampling")]

#: Optional dependencies: imported inside the functions that need them.
OPTIONAL = {"dask", "distributed", "pyarrow", "matplotlib", "tqdm", "sdmetrics", "pytest"}

#: Known exceptions, each with the work that removes it (none left).
PENDING = set()


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _known(modules):
    """Module names, with the compiled kernels (their .pyx sources)."""
    return set(modules) | {_module_name(p) for p in PACKAGE.rglob("*.pyx")}


def _imports(name, path, known):
    """``(target, in_function, line)`` for every import in a module (targets resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(n) for n in ast.walk(node)
                               if isinstance(n, (ast.Import, ast.ImportFrom)))
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                       for alias in node.names]
        else:
            continue
        out += [(target, id(node) in in_function, node.lineno) for target in targets]
    return out


def _internal_edges(modules, known):
    """``{(importer, imported)}`` between dpsynth modules, with the packages an import runs."""
    edges = set()
    for name, path in modules.items():
        for target, _, _ in _imports(name, path, known):
            if target.split(".")[0] != "dpsynth":
                continue
            parts = target.split(".")
            for k in range(2, len(parts) + 1):  # dpsynth.a, dpsynth.a.b, ... all run
                imported = ".".join(parts[:k])
                if imported in known and not name.startswith(imported + ".") \
                        and imported != name:
                    edges.add((name, imported))
    return edges


def _layer(module):
    best, index = "", None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (module.startswith(prefix + ".") and prefix != "dpsynth")
            if inside and len(prefix) > len(best):
                best, index = prefix, i
    return index


def _cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_report():
    """Counts and lists of cycles, upward imports and function-level imports."""
    modules = _modules()
    known = _known(modules)
    edges = _internal_edges(modules, known)
    upward = sorted((a, b) for a, b in edges
                    if _layer(a) is not None and _layer(b) is not None and _layer(a) < _layer(b))
    crossing = sorted((a, b) for a, b in edges for p, q in INDEPENDENT + [(q, p) for p, q
                                                                         in INDEPENDENT]
                      if (a == p or a.startswith(p + ".")) and (b == q or b.startswith(q + ".")))
    in_function = sorted((name, target, line) for name, path in modules.items()
                         for target, inside, line in _imports(name, path, known) if inside)
    return {"modules": modules, "edges": edges, "cycles": _cycles(edges), "upward": upward,
            "crossing": crossing, "in_function": in_function}


@pytest.fixture(scope="module")
def report():
    return import_report()


def test_every_module_has_a_layer(report):
    assert [m for m in report["modules"] if _layer(m) is None] == []


def test_no_import_cycles(report):
    cycles = [c for c in report["cycles"]
              if not any(a in c and b in c for a, b in PENDING)]
    assert cycles == []


def test_no_import_from_a_higher_layer(report):
    assert [edge for edge in report["upward"] if edge not in PENDING] == []


def test_release_and_sampling_do_not_import_each_other(report):
    assert report["crossing"] == []


def test_imports_inside_functions_are_optional_dependencies_only(report):
    unexpected = [(name, target, line) for name, target, line in report["in_function"]
                  if target.split(".")[0] not in OPTIONAL and (name, target) not in PENDING]
    assert unexpected == []


def test_pending_exceptions_are_still_needed(report):
    """An entry of PENDING that no longer occurs must be removed from it."""
    seen = set(report["upward"]) | {(n, t) for n, t, _ in report["in_function"]}
    assert PENDING <= seen


def test_the_analysis_sees_known_imports():
    """The analysis itself: it finds a module-level import, a package's __init__ run by an
    import of one of its modules, and a function-level import."""
    report = import_report()
    assert ("dpsynth.release.adaptive_selection", "dpsynth.model.descent") in report["edges"]
    assert ("dpsynth.release.adaptive_selection", "dpsynth.model") in report["edges"]
    assert any(n == "dpsynth.engines.dask" and t == "dask" for n, t, _ in report["in_function"])
    assert _layer("dpsynth.engines.dask") > _layer("dpsynth.preprocessing") > _layer("dpsynth.utils")


if __name__ == "__main__":  # python -m tests.test_layers: the counts
    found = import_report()
    print(f"modules: {len(found['modules'])}, internal edges: {len(found['edges'])}")
    print(f"cycles: {len(found['cycles'])}", found["cycles"])
    print(f"upward imports: {len(found['upward'])}", found["upward"])
    print(f"release <-> sampling: {len(found['crossing'])}", found["crossing"])
    internal = [f for f in found["in_function"] if f[1].split(".")[0] == "dpsynth"]
    statements = {(n, line) for n, _, line in found["in_function"]}
    print(f"function-level imports: {len(statements)} statements, "
          f"{len(found['in_function'])} names ({len(internal)} of dpsynth modules)")
    for entry in found["in_function"]:
        print("  ", *entry)
