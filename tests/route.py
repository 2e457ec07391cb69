"""The route of one ``fastbertscore.score`` call, counted: which functions of the package it enters.

``sys.setprofile`` watches the second of two identical calls (two pairs on the embedded MiniLM; the first call loads
the model), and every Python function entered whose code lies in ``fastbertscore/`` is named by its module and
qualified name. Comprehensions, generator expressions and lambdas are counted apart (``code_objects``): they are
not hops anyone could remove. A function is a *hop* when some frame of another module of the package entered it;
it lies *above the steps* when its module is outside ``pipeline/`` and ``cache/``, and is *the front's* when it is
above the steps and entered while no step is running (no frame of ``pipeline/`` or ``cache/`` below it): the
route from ``score`` to the steps and back to the result, without what the steps call. ARCHITECTURE.md quotes
these figures and ``tests/test_front.py`` holds them; ``python tests/route.py`` prints them with the route itself.
"""

from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: The call counted: two pairs, plain options (as bert-score's README calls it).
CANDS = ["The cat sat on the mat.", "It is raining today."]
REFS = ["A cat was sitting on the mat.", "Today it rains."]
#: Directories of the package below the scorer: the steps themselves.
STEP_PACKAGES = ("pipeline", "cache")
UNNAMED = ("<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")
#: The most the counted call may enter (ARCHITECTURE.md quotes them; ``tests/test_front.py`` holds them): named
#: functions, their modules, hops, and the functions and modules above the steps.
MAX_FUNCTIONS, MAX_MODULES, MAX_HOPS, MAX_ABOVE_STEPS, MAX_MODULES_ABOVE_STEPS = 94, 23, 48, 28, 12
#: The most functions and modules the front's route may take (the design's aim: one call deep into the steps).
MAX_FRONT, MAX_FRONT_MODULES = 20, 7


@dataclass(frozen=True)
class Route:
    """What one call entered: ``functions`` (module, qualified name), in the order first entered; ``hops``: the
    functions entered from another module of the package; ``code_objects``: every code object, unnamed ones too."""

    functions: tuple[tuple[str, str], ...]
    hops: frozenset[tuple[str, str]]
    code_objects: int
    in_steps: frozenset[tuple[str, str]]

    @property
    def modules(self) -> set[str]:
        return {module for module, _ in self.functions}

    @property
    def above_steps(self) -> list[tuple[str, str]]:
        """The functions outside ``pipeline/`` and ``cache/``."""
        return [f for f in self.functions if f[0].split(".")[1] not in STEP_PACKAGES]

    @property
    def front(self) -> list[tuple[str, str]]:
        """The functions above the steps that the call entered while no step was running."""
        return [f for f in self.above_steps if f not in self.in_steps]


def _module_of(code: types.CodeType, root: str) -> str | None:
    """``fastbertscore.x.y`` for code in the package, else ``None``."""
    if not code.co_filename.startswith(root):
        return None
    relative = Path(code.co_filename[len(root) :]).with_suffix("")
    return ".".join(("fastbertscore", *relative.parts)).removesuffix(".__init__")


def trace(call: types.FunctionType | object) -> Route:
    """The route of ``call()`` (no arguments) through the package."""
    import fastbertscore

    root = str(Path(fastbertscore.__file__).resolve().parent) + os.sep
    order: dict[tuple[str, str], None] = {}
    hops: set[tuple[str, str]] = set()
    in_steps: set[tuple[str, str]] = set()
    codes: set[types.CodeType] = set()

    def under_a_step(frame: types.FrameType | None) -> bool:
        while frame is not None:
            module = _module_of(frame.f_code, root)
            if module is not None and module.split(".")[1] in STEP_PACKAGES:
                return True
            frame = frame.f_back
        return False

    def profile(frame: types.FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        module = _module_of(code, root)
        if module is None:
            return
        codes.add(code)
        if code.co_name in UNNAMED:
            return
        name = (module, code.co_qualname)
        order.setdefault(name)
        caller = frame.f_back
        while caller is not None and caller.f_code.co_name in UNNAMED:  # a comprehension's caller is its function
            caller = caller.f_back
        if caller is not None and _module_of(caller.f_code, root) not in (None, module):
            hops.add(name)
        if under_a_step(frame.f_back):
            in_steps.add(name)

    sys.setprofile(profile)
    try:
        call()  # type: ignore[operator]
    finally:
        sys.setprofile(None)
    return Route(tuple(order), frozenset(hops), len(codes), frozenset(in_steps))


def score_route(model: str) -> Route:
    """The route of the second of two identical ``fastbertscore.score`` calls with ``model``."""
    import fastbertscore

    def call() -> object:
        return fastbertscore.score(CANDS, REFS, model_type=model)

    call()  # loads the model; the second call is the one a user makes again and again
    return trace(call)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from paths import MINILM

    route = score_route(MINILM)
    for module, name in route.functions:
        print(f"{'hop ' if (module, name) in route.hops else '    '}{module}.{name}")
    above, front = route.above_steps, route.front
    print(
        f"{len(route.functions)} functions ({route.code_objects} code objects) in {len(route.modules)} modules; "
        f"{len(route.hops)} hops; {len(above)} above the steps in {len({m for m, _ in above})} modules; "
        f"the front's route {len(front)} functions in {len({m for m, _ in front})} modules"
    )


if __name__ == "__main__":
    main()
