"""``bertscore-baseline``: import the published baselines, build new ones, push them to the Hub."""

from __future__ import annotations

import argparse
import hashlib
import logging
import shutil
import sys
from pathlib import Path

from . import manifest
from .baselines import BaselineError, read_baseline
from .builder import build

logger = logging.getLogger(__name__)


def import_bert_score(source: Path | None, out_root: Path) -> list[str]:
    """Copy every ``<lang>/<model>.tsv`` of bert-score's ``rescale_baseline`` folder, bytes unchanged."""
    if source is None:
        try:
            import bert_score
        except ImportError:
            raise SystemExit("bert-score is not installed; pass --source path/to/bert_score/rescale_baseline") from None
        source = Path(bert_score.__file__).parent / "rescale_baseline"
        origin = f"bert-score {_bert_score_release()} wheel, bert_score/rescale_baseline"
    else:
        origin = str(source)
    imported = []
    for path in sorted(Path(source).rglob("*.tsv")):
        relpath = path.relative_to(source).as_posix()
        read_baseline(path)  # refuse to import a broken file
        target = out_root / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        manifest.record(out_root, relpath, source="imported", origin=origin, corpus="Common Crawl, 1M random sentence pairs (Zhang et al., ICLR 2020, Baseline Rescaling)")
        imported.append(relpath)
    return imported


def _bert_score_release() -> str:
    from importlib.metadata import version

    return version("bert-score")


def git_blob_id(path: Path) -> str:
    data = Path(path).read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def push(root: Path, repo_id: str, *, dry_run: bool, revision: str | None = None) -> int:
    """Upload new or changed files of ``root`` to the dataset repo in one commit."""
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith(".")}
    if dry_run:
        for relpath, path in files.items():
            print(f"add {relpath} ({path.stat().st_size} bytes)")
        print(f"dry run: {len(files)} files would be compared with datasets/{repo_id} and the changed ones uploaded")
        return 0
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    remote = {
        entry.path: getattr(entry, "blob_id", None)
        for entry in api.list_repo_tree(repo_id, repo_type="dataset", recursive=True, revision=revision)
    }
    changed = [relpath for relpath, path in files.items() if remote.get(relpath) != git_blob_id(path)]
    if not changed:
        print(f"datasets/{repo_id} is up to date")
        return 0
    operations = [CommitOperationAdd(path_in_repo=relpath, path_or_fileobj=str(files[relpath])) for relpath in changed]
    message = f"Update {len(changed)} baseline file(s)\n\n" + "\n".join(changed)
    api.create_commit(repo_id, operations, commit_message=message.splitlines()[0], commit_description=message,
                      repo_type="dataset", revision=revision)
    print(f"pushed {len(changed)} file(s) to datasets/{repo_id}")
    return 0


def _parse_args(argv):
    parser = argparse.ArgumentParser(prog="bertscore-baseline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="copy bert-score's published baselines into a baseline folder")
    imp.add_argument("--source", type=Path, help="a rescale_baseline folder (default: the installed bert-score)")
    imp.add_argument("--out", type=Path, default=Path("baselines"))
    b = sub.add_parser("build", help="compute a baseline from random pairs of a monolingual corpus")
    b.add_argument("--model", required=True)
    b.add_argument("--lang", required=True)
    b.add_argument("--name", help="Hub id to file the baseline under (default: --model; needed for a local folder)")
    b.add_argument("--corpus", type=Path, required=True, help="a text file, one sentence per line")
    b.add_argument("--pairs", type=int, default=500_000)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--block", type=int, default=2000, help="pairs between checkpoints")
    b.add_argument("--batch-size", type=int, default=64)
    b.add_argument("--device")
    b.add_argument("--out", type=Path, default=Path("baselines"))
    p = sub.add_parser("push", help="upload new or changed files to a Hub dataset repo")
    p.add_argument("--repo", required=True, help="ORG/NAME of the dataset repo")
    p.add_argument("--root", type=Path, default=Path("baselines"))
    p.add_argument("--revision")
    p.add_argument("--dry-run", action="store_true", help="print what would be uploaded; no network")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        if args.command == "import":
            done = import_bert_score(args.source, args.out)
            print(f"imported {len(done)} baseline files into {args.out}")
        elif args.command == "build":
            if not args.corpus.is_file():
                print(f"bertscore-baseline: error: corpus file {args.corpus} not found", file=sys.stderr)
                return 2
            path = build(args.model, args.lang, args.corpus, args.out, name=args.name, pairs=args.pairs, seed=args.seed,
                         block=args.block, batch_size=args.batch_size, device=args.device)
            print(f"wrote {path}")
        else:
            return push(args.root, args.repo, dry_run=args.dry_run, revision=args.revision)
    except (BaselineError, ValueError) as error:
        print(f"bertscore-baseline: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
