"""Fill a baseline folder and publish it: import bert-score's published tables, upload what changed to a Hub
dataset repo (files compared by git blob id, so an unchanged file is never uploaded again)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from fastbertscore.baselines import manifest
from fastbertscore.baselines.table import read_baseline
from fastbertscore.files import git_blob_id, write_atomic
from fastbertscore.outputs import refuse_overwriting_inputs

logger = logging.getLogger(__name__)


def import_bert_score(source: Path | None, out_root: Path) -> list[str]:
    """Copy every ``<lang>/<model>.tsv`` of bert-score's ``rescale_baseline`` folder, bytes unchanged."""
    if source is None:
        try:
            import bert_score
        except ImportError:
            raise ValueError("bert-score is not installed; pass --source path/to/bert_score/rescale_baseline") from None
        source = Path(bert_score.__file__).parent / "rescale_baseline"
        origin = f"bert-score {_bert_score_release()} wheel, bert_score/rescale_baseline"
    else:
        origin = str(source)
    tables = {path.relative_to(source).as_posix(): path for path in sorted(Path(source).rglob("*.tsv"))}
    refuse_overwriting_inputs(  # --out naming --source (or a file in it): refused before anything is written
        {
            **{f"--out's {relpath}": out_root / relpath for relpath in tables},
            "--out's manifest": out_root / manifest.MANIFEST,
        },
        {f"--source's {relpath}": path for relpath, path in tables.items()},
    )
    imported = []
    for relpath, path in tables.items():
        read_baseline(path)  # refuse to import a broken file
        write_atomic(out_root / relpath, path.read_bytes())  # bytes unchanged; never half a table
        manifest.record(
            out_root,
            relpath,
            source="imported",
            origin=origin,
            corpus="Common Crawl, 1M random sentence pairs (Zhang et al., ICLR 2020, Baseline Rescaling)",
        )
        imported.append(relpath)
    return imported


def _bert_score_release() -> str:
    from importlib.metadata import version

    return version("bert-score")


#: The files at the top of a baseline folder that are published; below it, only ``<lang>/…/*.tsv`` tables are.
PUBLISHED_TOP_FILES = (manifest.MANIFEST, "README.md")


def publishable(root: Path) -> dict[str, Path]:
    """What a baseline repo holds, by path in the repo: ``<lang>/…/*.tsv`` tables (each read as a baseline first),
    ``manifest.json`` and ``README.md``. Nothing else in ``root`` is ever published: no file or folder whose name
    starts with a dot (``.git``, ``.cache/huggingface/token``, locks, checkpoints), no symbolic link, nothing that
    resolves outside ``root``, no other kind of file.

    Raises:
        BaselineError: a ``.tsv`` that is not a baseline table (a renamed secret is not published either).
    """
    root = Path(root)
    top = root.resolve()
    files: dict[str, Path] = {}
    for folder, dirs, names in os.walk(root):  # links to folders are listed, never entered
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (here / d).is_symlink())
        for name in sorted(names):
            path = here / name
            relpath = path.relative_to(root).as_posix()
            wanted = relpath in PUBLISHED_TOP_FILES or ("/" in relpath and name.endswith(".tsv"))
            if name.startswith(".") or not wanted or path.is_symlink() or not path.is_file():
                continue
            if not path.resolve().is_relative_to(top):
                continue
            if name.endswith(".tsv"):
                read_baseline(path)  # refuse to publish a broken table, or a file named like one
            files[relpath] = path
    return dict(sorted(files.items()))


def push(root: Path, repo_id: str, *, dry_run: bool, revision: str | None = None) -> list[str]:
    """Upload what a baseline repo holds (:func:`publishable`) that is new or changed in the dataset repo
    ``repo_id``, in one commit; return their paths. ``dry_run`` touches no network and returns every such file
    (what would be compared)."""
    files = publishable(root)
    if dry_run:
        return list(files)
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    remote = {
        entry.path: getattr(entry, "blob_id", None)
        for entry in api.list_repo_tree(repo_id, repo_type="dataset", recursive=True, revision=revision)
    }
    changed = [relpath for relpath, path in files.items() if remote.get(relpath) != git_blob_id(path)]
    if changed:
        operations = [
            CommitOperationAdd(path_in_repo=relpath, path_or_fileobj=str(files[relpath])) for relpath in changed
        ]
        message = f"Update {len(changed)} baseline file(s)\n\n" + "\n".join(changed)
        api.create_commit(
            repo_id,
            operations,
            commit_message=message.splitlines()[0],
            commit_description=message,
            repo_type="dataset",
            revision=revision,
        )
        logger.info("pushed %d file(s) to datasets/%s", len(changed), repo_id)
    return changed
