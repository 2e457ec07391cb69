"""The package's shape, as ARCHITECTURE.md describes it: no import cycles, imports only downward through the
layers, no module named like a standard-library one, every subpackage in the wheel, and a torch floor with which
transformers loads every model."""

from __future__ import annotations

import ast
import re
import sys

import pytest
import tomllib
from paths import REPO

PACKAGE = REPO / "fastbertscore"

# Lowest first: a module may import from its own layer or a lower one, never a higher one.
LAYERS = [
    (
        "foundation",
        [
            "_version",
            "hardware",
            "exact",
            "heap",
            "phases",
            "validate",
            "files",
            "outputs",
            "hub",
            "hashing",
            "signature",
            "result",
        ],
    ),
    ("embedding caches", ["cache"]),
    ("models", ["models"]),
    ("pipeline", ["pipeline"]),
    ("settings and baselines", ["settings", "baselines", "assembly", "idf"]),
    ("scorer", ["scorer", "scorer_attributes", "matrix", "front", "compute"]),
    ("built on the scorer", ["baselines.build", "explanations", "metaeval", "scale", "significance", "integrations"]),
    ("command line and the Space", ["cli", "space"]),
    ("public API", ["", "__main__"]),
]


def _module_name(path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    """Index in LAYERS of the longest matching prefix (``fastbertscore.baselines.build`` beats ``…baselines``)."""
    rest = module.removeprefix("fastbertscore").removeprefix(".")
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (rest == prefix or rest.startswith(prefix + ".") or (prefix == "" and rest == "")) and len(
                prefix
            ) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} is in no layer of tests/test_layout.py: add it where ARCHITECTURE.md puts it"
    return best


def _imports(module: str, source: str | None = None) -> set[str]:
    """Modules of this package that ``module`` (or ``source`` standing in for its text) imports anywhere
    (functions included), plus, for each, the ``__init__`` of its subpackage, which Python runs first (the root
    package's is left out: it runs before anything and only re-exports)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8") if source is None else source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] != "fastbertscore":
                continue
            while name not in MODULES:  # `import fastbertscore.x.y as z` of a name inside a module
                name = name.rpartition(".")[0]
            found.add(name)
            parent = name.rpartition(".")[0]
            while parent.count(".") and not module.startswith(parent + "."):  # its own package runs first anyway
                found.add(parent)
                parent = parent.rpartition(".")[0]
    found.discard(module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_there_are_no_import_cycles():
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module, path):
        state[module] = 1
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                cycle = path[path.index(target) :] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in MODULES:
        if module not in state:
            visit(module, [module])


def test_imports_only_go_down_the_layers():
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in GRAPH.items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(upward)


def test_the_checker_sees_imports_inside_functions():
    # A module whose only imports sit inside a method and a function, absolute and relative.
    source = (
        "class Late:\n    def run(self):\n        from fastbertscore.scorer import BERTScorer\n\n"
        "def later():\n    from ..baselines import table\n    import fastbertscore.pipeline.tokens as t\n"
    )
    found = _imports("fastbertscore.cli.show", source)
    assert {"fastbertscore.scorer", "fastbertscore.baselines.table", "fastbertscore.pipeline.tokens"} <= found
    # …and the subpackage __init__ that Python runs before a module of it.
    assert {"fastbertscore.baselines", "fastbertscore.pipeline"} <= found
    assert _imports("fastbertscore.cli.show", "import os\n") == set()


def _private_reaches(source: str) -> list[str]:
    """``x._name`` reads where ``x`` is not ``self`` or ``cls``, and ``from m import _name``: another object's or
    module's private members (dunder names are public protocol)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom):
            found += [
                f"line {node.lineno}: import {a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return sorted(found, key=lambda where: int(where.split()[1].rstrip(":")))


def test_no_module_reads_another_objects_private_members():
    reaches = [
        f"{module} {where}"
        for module, path in MODULES.items()
        for where in _private_reaches(path.read_text(encoding="utf-8"))
    ]
    assert not reaches, "private members read from outside their object:\n" + "\n".join(reaches)


#: Private names tests may read: evaluate's own protocol method, and a server's handler reading its server.
TEST_EXCEPTIONS = {("test_evaluate_module.py", "metric_class._compute"), ("servers.py", "proxy._server")}


def test_no_test_reads_private_members():
    reaches = [
        f"{path.relative_to(REPO)} {where}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for where in _private_reaches(path.read_text(encoding="utf-8"))
        if (path.name, where.split(": ", 1)[1]) not in TEST_EXCEPTIONS
    ]
    assert not reaches, "tests read private members (use the public API or the Embedder):\n" + "\n".join(reaches)


def test_the_private_reach_check_sees_each_form():
    source = "def f(scorer, self):\n    scorer._encoder\n    self._ok\n    from m import _helper\n    x.__len__\n"
    assert _private_reaches(source) == ["line 2: scorer._encoder", "line 4: import _helper"]


def test_no_module_is_named_like_a_standard_library_one():
    clashes = [m for m in MODULES if m.rpartition(".")[2] in sys.stdlib_module_names]
    assert not clashes, clashes


def test_every_subpackage_is_in_the_wheel():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {_module_name(path) for path in PACKAGE.rglob("__init__.py")}
    assert packages <= listed, f"pyproject.toml [tool.setuptools] packages lacks {sorted(packages - listed)}"


def test_the_declared_torch_floor_loads_what_transformers_loads():
    """transformers 5 refuses .bin weights (torch.load) below the torch version it names: a floor under it
    installs a torch with which many Hub models do not load."""
    import inspect

    from packaging.requirements import Requirement
    from packaging.version import Version
    from transformers.utils import import_utils

    needed = re.search(
        r'is_torch_greater_or_equal\("([\d.]+)"\)', inspect.getsource(import_utils.check_torch_load_is_safe)
    )
    if needed is None:
        pytest.skip("this transformers names no torch version for torch.load")
    requirements = [
        Requirement(d) for d in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    ]
    torch_floor = [
        Version(s.version) for r in requirements if r.name == "torch" for s in r.specifier if s.operator == ">="
    ]
    assert torch_floor and min(torch_floor) >= Version(needed[1]), f"torch>={needed[1]} is what transformers needs"


def test_architecture_md_names_every_part():
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = {
        m.rpartition(".")[2]
        for m in MODULES
        if m.count(".") == 1
        or m.startswith(("fastbertscore.pipeline.", "fastbertscore.baselines.", "fastbertscore.cache."))
    }
    missing = sorted(
        n
        for n in named - {"__main__", "_version", "__init__"}
        if f"`{n}" not in text and f"{n}`" not in text and f"{n}/" not in text and f"{n}.py" not in text
    )
    assert not missing, f"ARCHITECTURE.md does not say where these live: {missing}"


@pytest.mark.parametrize(
    "adapter", ["bertscore.py", "app.py", *sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("benchmarks/*.py"))]
)
def test_adapters_use_public_names_only(adapter):
    """The evaluate module, the Space and the benchmarks reach the engine through ``fastbertscore``'s own names,
    never a module inside it (an internal module may move; a public name may not)."""
    import fastbertscore

    tree = ast.parse((REPO / adapter).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            inner = [a.name for a in node.names if a.name.startswith("fastbertscore.")]
            assert not inner, f"{adapter} imports {inner[0]}"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fastbertscore"):
            assert node.module == "fastbertscore", f"{adapter} imports from {node.module}"
            assert all(a.name in fastbertscore.__all__ for a in node.names), f"{adapter}: not public: {node.names}"
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("fb", "fastbertscore")
        ):
            assert node.attr in fastbertscore.__all__ or node.attr == "__version__", (
                f"{adapter} uses fastbertscore.{node.attr}"
            )


def test_the_tests_name_the_default_model_once():
    """One constant (tests/paths.py) names the embedded model for every test, and it is the library's default."""
    import paths

    import fastbertscore as fb

    assert paths.MINILM == fb.DEFAULT_MODEL
    copies = [
        str(p.relative_to(REPO))
        for p in (REPO / "tests").rglob("*.py")
        if p.name != "paths.py" and re.search(r"^MINILM\s*=", p.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert not copies, f"define MINILM only in tests/paths.py: {copies}"


#: The size rules: no module of the package over this many lines, no function over that many, and app.py as short
#: as evaluate's Spaces.
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 60
MAX_APP_LINES = 30


def test_no_module_is_over_300_lines():
    long = {
        m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


def test_no_function_is_over_60_lines():
    """Docstring included: a function that long does two jobs, or says what a module's docstring should."""
    long = {
        f"{m}.{node.name}": length
        for m, p in MODULES.items()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES
    }
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them): {long}"


def test_app_py_only_builds_and_launches_the_space():
    lines = (REPO / "app.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_APP_LINES, f"app.py has {len(lines)} lines; the Space lives in fastbertscore/space/"


def test_the_space_imports_gradio_only_to_build_its_page():
    """Gradio is an optional extra: importing ``fastbertscore`` and ``fastbertscore.space`` (its handlers included)
    must work without it; only ``build_demo()`` imports it."""
    import subprocess

    code = (
        "import sys, fastbertscore, fastbertscore.space, fastbertscore.space.handlers\n"
        "assert 'gradio' not in sys.modules, 'gradio imported'\n"
        "fastbertscore.space.build_demo()\n"
        "assert 'gradio' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
