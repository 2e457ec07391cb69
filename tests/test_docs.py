"""The documentation: the MkDocs site builds with --strict (offline), and every Python example in README.md and
docs/ runs on the embedded model; where an example shows its output (a ``>>>`` block), the output must match.

A block preceded by ``<!-- not run: reason -->`` is the exception, and says which test runs the same code. Shell
blocks preceded by ``<!-- run: ... -->`` run too, each command in turn, and the ``# `` lines under a command are
its output: words must match, numbers within the tolerance policy (they are printed with 6 decimals)."""

from __future__ import annotations

import doctest
import re
import shutil
import subprocess
import sys

import pytest
from paths import REPO
from tolerances import PRINTED_6, prf_bounds

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:<!-- not run: (?P<reason>[^>]+) -->\n)?```python\n(?P<code>.*?)```", re.DOTALL)


SHELL = re.compile(r"<!-- run:[^>]*-->\n```bash\n(?P<code>.*?)```", re.DOTALL)


def _blocks(page):
    return [(m["code"], m["reason"]) for m in BLOCK.finditer(page.read_text(encoding="utf-8"))]


def test_every_page_is_in_the_site_and_the_site_builds_strict(tmp_path):
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (REPO / "docs").glob("*.md"):
        assert page.name in nav, f"docs/{page.name} is in no nav entry"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    import fastbertscore

    for name in fastbertscore.__all__:  # the API reference covers every public name (a lazy one where it lives)
        if name not in ("__version__", "lang2model", "model2layers", "LANG2MODEL", "MODEL2LAYERS", "DEFAULT_MODEL"):
            home = getattr(getattr(fastbertscore, name), "__module__", "fastbertscore")
            assert f'id="fastbertscore.{name}"' in api or f'id="{home}.{name}"' in api, name


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if any(not reason for _, reason in _blocks(p))], ids=lambda p: p.name
)
def test_python_examples_run(page, tmp_path, monkeypatch):
    # The examples load the evaluate module as users do: "bertscore" (a checkout folder) or "./bertscore.py".
    (tmp_path / "bertscore").mkdir()
    shutil.copy(REPO / "bertscore.py", tmp_path / "bertscore" / "bertscore.py")
    shutil.copy(REPO / "bertscore.py", tmp_path / "bertscore.py")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    ran = 0
    for k, (code, reason) in enumerate(_blocks(page)):
        if reason:
            continue
        if code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(code, namespace, f"{page.name}[{k}]", str(page), 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test, clear_globs=False)
            assert runner.failures == 0, f"{page.name}, block {k}: the output differs from what the page shows"
        else:
            exec(compile(code, f"{page.name}[{k}]", "exec"), namespace)  # noqa: S102 - our own documentation
        ran += 1
    assert ran > 0


def _commands(block: str):
    """(command, shown output lines) for each command of a shell block."""
    out = []
    for line in block.splitlines():
        if (line.startswith("# ") or line == "#") and out:  # "#" alone: an empty line of output
            out[-1][1].append(line[2:])
        elif line.strip():
            out.append((line, []))
    return out


NUMBER = re.compile(r"-?\d+\.\d+")


def _same_word(got: str, shown: str) -> bool:
    """The same word, or the same word around numbers that agree within the tolerance policy and their printing
    (a number printed with k decimals may differ by its rounding: half a unit of the k-th decimal, on each side)."""
    if got == shown:
        return True
    if NUMBER.sub("#", got) != NUMBER.sub("#", shown):
        return False
    pairs = zip(NUMBER.findall(got), NUMBER.findall(shown), strict=True)
    return all(
        abs(float(x) - float(y)) <= prf_bounds()[2] + 2 * PRINTED_6 * 10 ** (6 - len(y.split(".")[1])) for x, y in pairs
    )


def _same_words(got: str, shown: str) -> bool:
    a, b = got.split(), shown.split()
    return len(a) == len(b) and all(map(_same_word, a, b))


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if SHELL.search(p.read_text(encoding="utf-8"))], ids=lambda p: p.name
)
def test_shell_examples_run_and_print_what_they_show(page, tmp_path):
    for block in SHELL.finditer(page.read_text(encoding="utf-8")):
        for command, shown in _commands(block["code"]):
            done = subprocess.run(
                ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
            )
            assert done.returncode == 0, f"{command}: {done.stderr[-1000:]}"
            got = done.stdout.rstrip("\n").splitlines()  # a trailing blank line is not shown
            if shown:
                assert len(got) == len(shown) and all(map(_same_words, got, shown)), (
                    f"{command} printed {got}, the page shows {shown}"
                )
