"""``bertscore-baseline push`` publishes what a baseline repo holds and nothing else: ``<lang>/…/*.tsv`` tables,
``manifest.json`` and ``README.md``; never a hidden file (a Hub token, ``.git``), a link, or what a link points at."""

from __future__ import annotations

import os

from paths import SHIPPED_BASELINE

from fastbertscore.cli.baseline import main

TABLE = SHIPPED_BASELINE.read_text(encoding="utf-8")


def _folder_with_secrets(tmp_path):
    """A baseline folder that also holds what a working folder does: a Hub token, git objects, a lock, notes, and
    links to a table and a folder outside it."""
    root, outside = tmp_path / "baselines", tmp_path / "outside"
    for relpath, text in {
        "en/acme/tiny.tsv": TABLE,
        "fr/tiny.tsv": TABLE,
        "manifest.json": "{}\n",
        "README.md": "# baselines\n",
        ".cache/huggingface/token": "hf_secret\n",
        ".git/objects/ab/cdef0123": "blob\n",
        ".git/config": "[remote]\n",
        "en/.tiny.tsv.lock": "",
        "en/.acme__tiny.tsv.checkpoint.json": "{}",
        "top.tsv": TABLE,  # a table outside any language folder
        "notes.txt": "to do\n",
        "en/notes.md": "to do\n",
    }.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    (outside / "de").mkdir(parents=True)
    (outside / "de" / "stolen.tsv").write_text(TABLE, encoding="utf-8")
    (outside / "id_rsa.tsv").write_text(TABLE, encoding="utf-8")
    os.symlink(outside / "de", root / "de")  # a folder link: its tables are not this folder's
    os.symlink(outside / "id_rsa.tsv", root / "en" / "linked.tsv")
    os.symlink(root / "en" / "acme" / "tiny.tsv", root / "en" / "inside-link.tsv")  # a link, even one inside
    return root


def test_push_publishes_only_what_a_baseline_repo_holds(tmp_path, capsys):
    root = _folder_with_secrets(tmp_path)
    assert main(["push", "--repo", "acme/baselines", "--root", str(root), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in lines[:-1]] == [
        "add README.md",
        "add en/acme/tiny.tsv",
        "add fr/tiny.tsv",
        "add manifest.json",
    ]
    assert lines[-1].startswith("dry run: 4 files would be compared with datasets/acme/baselines")
    from fastbertscore.baselines.publish import publishable  # what a real push compares and uploads

    assert list(publishable(root)) == ["README.md", "en/acme/tiny.tsv", "fr/tiny.tsv", "manifest.json"]


def test_a_tsv_that_is_not_a_baseline_table_is_never_published(tmp_path, capsys):
    root = _folder_with_secrets(tmp_path)
    secret = root / "en" / "credentials.tsv"
    secret.write_text("hf_secret\n", encoding="utf-8")
    assert main(["push", "--repo", "acme/baselines", "--root", str(root), "--dry-run"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"bertscore-baseline: error: baseline file {secret} has header")
