"""Fill a baseline folder and publish it: import bert-score's published tables, upload what changed to a Hub
dataset repo (files compared by git blob id, so an unchanged file is never uploaded again)."""

from __future__ import annotations

import logging
from pathlib import Path

from fastbertscore.baselines import manifest
from fastbertscore.baselines.table import read_baseline
from fastbertscore.files import git_blob_id, write_atomic

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
    imported = []
    for path in sorted(Path(source).rglob("*.tsv")):
        relpath = path.relative_to(source).as_posix()
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


def push(root: Path, repo_id: str, *, dry_run: bool, revision: str | None = None) -> list[str]:
    """Upload the files of ``root`` that are new or changed in the dataset repo ``repo_id``, in one commit; return
    their paths. ``dry_run`` touches no network and returns every file (what would be compared)."""
    files = {
        p.relative_to(root).as_posix(): p
        for p in sorted(Path(root).rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }
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
