"""The Python a page shows, held to the package: every name it takes from fastbertscore exists, and every keyword it
passes to a fastbertscore callable (or to this repository's evaluate module) is one that callable takes. The
examples' code is read, not run (tests/test_docs.py runs it)."""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from dataclasses import dataclass

import docs_code
import docs_text

EVALUATE = "evaluate"  # the evaluate package
EVALUATE_LOAD = "evaluate.load"
EVALUATE_COMPUTE = "bertscore.py's compute"
MISSING = object()


@dataclass(frozen=True)
class Instance:
    cls: type


@dataclass(frozen=True)
class EvaluateModule:
    path: str


def python_of(text: str) -> list[tuple[str, bool]]:
    """``(code, is_example)``: the code of a page's Python blocks (examples; doctest prompts taken off, their output
    left out) and of its inline code spans that parse as one Python expression naming the package (mentions)."""
    out = []
    for kind, lang, code in docs_text.segments(text):
        if kind == "code" and lang == "python":
            if code.lstrip().startswith(">>>"):
                code = "\n".join(line[4:] for line in code.splitlines() if line[:4] in (">>> ", "... "))
            out.append((code, True))
    for span in docs_text.spans(text):
        if span.startswith(("fb.", "fastbertscore.", "evaluate.load(")) or span.split("(", 1)[0] in _public():
            try:
                ast.parse(span, mode="eval")
            except SyntaxError:
                continue
            out.append((span, False))
    return out


def _public() -> frozenset[str]:
    import fastbertscore

    return frozenset(fastbertscore.__all__)


def _accepted(callee) -> frozenset[str] | None:
    """The keywords ``callee`` takes; None where it is not ours to check."""
    options = docs_code.settings_names() | {"verbose"}
    if callee == EVALUATE_COMPUTE:
        return options | {"predictions", "references"}
    if callee == EVALUATE_LOAD:
        import evaluate

        return options | frozenset(inspect.signature(evaluate.load).parameters)
    if not callable(callee) or not getattr(callee, "__module__", "").startswith("fastbertscore"):
        return None
    try:
        parameters = inspect.signature(callee).parameters
    except (TypeError, ValueError):
        return None
    kinds = {p.kind for p in parameters.values()}
    return frozenset(parameters) | (options if inspect.Parameter.VAR_KEYWORD in kinds else frozenset())


class _Reader(ast.NodeVisitor):
    def __init__(self, env: dict, findings: list[str]):
        self.env, self.findings = env, findings
        self.example = True  # code a reader runs, not an inline mention

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top == "fastbertscore":
                self.env[alias.asname or top] = importlib.import_module(alias.name if alias.asname else top)
            elif top == "evaluate":
                self.env[alias.asname or top] = EVALUATE

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not (node.module or "").startswith("fastbertscore"):
            return
        module = importlib.import_module(node.module)
        for alias in node.names:
            found = self._attribute(module, alias.name, f"from {node.module} import {alias.name}")
            if found is not MISSING:
                self.env[alias.asname or alias.name] = found

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        value = self._value(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and value is not None:
                self.env[target.id] = value

    def visit_Call(self, node: ast.Call) -> None:
        callee = self._resolve(node.func)
        first = node.args[0] if node.args else None
        if (
            callee == EVALUATE_LOAD
            and self.example
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            name = first.value
            if not name.endswith(".py") and "/" not in name:
                self.findings.append(
                    f"evaluate.load(\"{name}\") loads evaluate's own module, not this repository's: load "
                    '"./bertscore.py" (the file, by its path)'
                )
        accepted = _accepted(callee)
        if accepted is not None:
            for keyword in node.keywords:
                if keyword.arg and keyword.arg not in accepted:
                    self.findings.append(f"{ast.unparse(node.func)}() takes no keyword {keyword.arg!r}")
        self.generic_visit(node)

    def _value(self, expr: ast.expr):
        """What an assignment binds, where it matters: an evaluate module, or an instance of a class of ours."""
        if not isinstance(expr, ast.Call):
            return None
        callee = self._resolve(expr.func)
        if callee == EVALUATE_LOAD and expr.args and isinstance(expr.args[0], ast.Constant):
            return EvaluateModule(str(expr.args[0].value))
        if inspect.isclass(callee) and callee.__module__.startswith("fastbertscore"):
            return Instance(callee)
        return None

    def _resolve(self, expr: ast.expr):
        if isinstance(expr, ast.Name):
            return self.env.get(expr.id)
        if not isinstance(expr, ast.Attribute):
            return None
        base = self._resolve(expr.value)
        if base == EVALUATE:
            return EVALUATE_LOAD if expr.attr == "load" else None
        if isinstance(base, EvaluateModule):
            return EVALUATE_COMPUTE if expr.attr == "compute" else None
        if isinstance(base, Instance):  # an instance may hold attributes its class does not show: no finding
            return getattr(base.cls, expr.attr, None)
        if isinstance(base, types.ModuleType) or inspect.isclass(base):
            found = self._attribute(base, expr.attr, ast.unparse(expr))
            return None if found is MISSING else found
        return None

    def _attribute(self, owner, name: str, shown: str):
        if hasattr(owner, name):
            return getattr(owner, name)
        if isinstance(owner, types.ModuleType):
            try:
                return importlib.import_module(f"{owner.__name__}.{name}")
            except ImportError:
                pass
        self.findings.append(f"{shown}: {getattr(owner, '__name__', owner)} has no {name!r}")
        return MISSING


def python_findings(text: str) -> list[str]:
    """Names a page takes from fastbertscore that do not exist, keywords a callable of ours does not take, and
    evaluate.load calls that would load evaluate's own module instead of this repository's."""
    import fastbertscore

    findings: list[str] = []
    env: dict = {name: getattr(fastbertscore, name) for name in fastbertscore.__all__ if name != "space"}
    env |= {"fb": fastbertscore, "fastbertscore": fastbertscore}  # how the pages spell the package in their prose
    reader = _Reader(env, findings)
    for code, example in python_of(text):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue  # a fragment (a signature with `*`), not a program
        reader.example = example
        reader.visit(tree)
    return findings


def _imported(tree: ast.AST) -> set[str]:
    return {
        (a.asname or a.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
    }


def _bound(tree: ast.AST) -> set[str]:
    """The names a program binds: imports, assignments, loop and ``with`` targets, functions, classes, parameters."""
    names = _imported(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _loads(node: ast.AST) -> set[str]:
    """The names a statement reads, less those its own comprehensions and lambdas bind."""
    local = {
        n.id
        for c in ast.walk(node)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    }
    local |= {a.arg for f in ast.walk(node) if isinstance(f, ast.Lambda) for a in f.args.args}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local


def unbound_findings(text: str) -> list[str]:
    """Every name a page's Python uses is defined before it, by the statements above it or the page's blocks up to
    it (they run in order in one namespace, as tests/test_docs.py runs them), or is a builtin; and every module a
    block uses is imported in that block: a recipe that uses ``transformers`` without importing it fails when
    copied, even where an earlier block imported it, and whether or not the docs test runs it."""
    import builtins

    known, modules = set(dir(builtins)), set()
    found = []
    for code, example in python_of(text):
        if not example:
            continue
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        shown, missing, later = repr(code.strip()[:50]), set(), []
        for statement in tree.body:  # functions and classes run later: their bodies see the whole block
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                later.append(statement)
                missing |= (
                    {n for d in statement.args.defaults for n in _loads(d)} - known
                    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
                    else set()
                )
            else:
                missing |= _loads(statement) - known
            known |= _bound(statement)
        missing |= {n for s in later for n in _loads(s)} - known
        here = _imported(tree) | (_bound(tree) - modules)
        modules |= _imported(tree)
        bases = {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        found += [f"{name}: used before it is imported or defined ({shown})" for name in sorted(missing)]
        found += [
            f"{name}: a module this block uses without importing it ({shown})"
            for name in sorted(bases & modules - here)
        ]
    return found
