"""Where a rescaling baseline comes from: shipped files, the HF cache, then the Hub dataset repo.

The dataset repo holds ``<lang>/<model_id>.tsv`` (a ``/`` in the id is a folder), exactly the layout of
``baselines/`` in this repository.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from pathlib import Path

from fastbertscore import hub
from fastbertscore.baselines.table import BaselineError
from fastbertscore.files import git_blob_id, sha256_of
from fastbertscore.models.loading import model_id

logger = logging.getLogger(__name__)

#: The Hub dataset repo that holds the baselines; override with FASTBERTSCORE_BASELINE_REPO.
DEFAULT_REPO = "fastbertscore/baselines"
_PACKAGE = Path(__file__).resolve().parents[1]  # fastbertscore/
# In a wheel the files sit in fastbertscore/baselines_data; in a checkout (or editable install) in baselines/.
SHIPPED_DIRS = (_PACKAGE / "baselines_data", _PACKAGE.parent / "baselines")
_SAFE_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def baseline_relpath(lang: str, model_type: str) -> str:
    """``<lang>/<model_id>.tsv`` of a model to score with; refuses a local folder, whatever its name (a fine-tuned
    model saved at ``./roberta-large`` is not roberta-large), and names that could leave the baseline folder."""
    name = model_id(model_type)
    folder = local_folder(model_type) if name == model_type else None
    if hub.looks_like_path(name) or folder is not None:
        named = f" (the local folder {folder})" if folder is not None and not hub.looks_like_path(name) else ""
        raise BaselineError(
            f"no rescaling baseline for model_type={model_type!r}{named}: baselines are filed under Hub model ids, "
            f"and a folder path names none. Pass baseline_path= a LAYER,P,R,F table; make one with: "
            f"bertscore-baseline build --model {model_type} --name NAME --lang {lang} --corpus SENTENCES.txt "
            f"(it writes baselines/{lang}/NAME.tsv)"
        )
    return relpath_of_id(lang, name)


def relpath_of_id(lang: str, model_id: str) -> str:
    """``<lang>/<model_id>.tsv`` of a Hub id (``bertscore-baseline build --name``); refuses paths and names that
    could leave the baseline folder (``..``, ``/abs``)."""
    if hub.looks_like_path(model_id):
        raise BaselineError(
            f"{model_id!r} is a path, not a Hub model id to file a baseline under: name one (ORG/NAME or NAME)"
        )
    for part in [lang.lower(), *model_id.split("/")]:
        if not _SAFE_PART.match(part) or part in (".", ".."):
            raise BaselineError(
                f"cannot look up a baseline for lang={lang!r}, model {model_id!r}: {part!r} is not a safe path part "
                "(letters, digits, '.', '_', '-'; no '..'). Pass baseline_path= for a file of your own."
            )
    return "/".join([lang.lower(), *model_id.split("/")]) + ".tsv"


def local_folder(model_type: str) -> str | None:
    """The resolved path of the local folder ``model_type`` names (models load from there first, whatever the
    name), or None for a Hub id."""
    return os.path.realpath(model_type) if os.path.isdir(model_type) else None


def signature_model(model_type: str) -> str:
    """The model as a signature and its hash name it: as given, except a local folder whose name reads as a Hub id
    (``roberta-large`` where ``./roberta-large`` exists), which is named by its resolved path, so that a model
    saved there never shares the Hub model's hash. The embedded default model's folder keeps its name."""
    folder = local_folder(model_type)
    if folder is None or hub.looks_like_path(model_type) or model_id(model_type) != model_type:
        return model_type
    return folder


def repo_settings(repo_id: str | None = None, revision: str | None = None) -> tuple[str, str]:
    return (
        repo_id or os.environ.get("FASTBERTSCORE_BASELINE_REPO") or DEFAULT_REPO,
        revision or os.environ.get("FASTBERTSCORE_BASELINE_REVISION") or "main",
    )


def find_baseline(
    lang: str, model_type: str, *, repo_id: str | None = None, revision: str | None = None
) -> tuple[Path, str]:
    """Return ``(path, source)`` of the baseline for ``(lang, model_type)``.

    Looks in the files shipped with the package, then the Hugging Face cache, then downloads from the Hub
    dataset repo (unless ``HF_HUB_OFFLINE`` is set). ``source`` says which, for logs and errors.

    Raises:
        BaselineError: found nowhere; the message lists every place tried and how to build the baseline.
    """
    relpath = baseline_relpath(lang, model_type)
    tried = []
    for folder in SHIPPED_DIRS:
        path = folder / relpath
        if path.is_file():
            return path, f"shipped file {path}"
        tried.append(f"shipped: {path}")
    repo_id, revision = repo_settings(repo_id, revision)
    found, where = _from_hub(repo_id, revision, relpath, tried)
    if found is not None:
        return found, where
    model = model_id(model_type)
    raise BaselineError(
        f"no rescaling baseline for model {model!r} and lang={lang!r}. Tried: " + "; ".join(tried) + ". "
        f"Build one with: bertscore-baseline build --model {model} --lang {lang} --corpus SENTENCES.txt "
        "(or pass baseline_path=, or score without rescale_with_baseline=True)."
    )


def _from_hub(repo_id: str, revision: str, relpath: str, tried: list[str]) -> tuple[Path | None, str]:
    from huggingface_hub import constants, hf_hub_download

    where = f"{repo_id}@{revision}:{relpath}"
    try:
        path = Path(hf_hub_download(repo_id, relpath, repo_type="dataset", revision=revision, local_files_only=True))
    except Exception:  # noqa: BLE001 - any miss here only means "not cached"
        tried.append(f"HF cache: {where}")
    else:
        problem = cached_file_problem(path)
        if problem is None:
            return path, f"HF cache {pinned(repo_id, revision, relpath, path)}"
        logger.warning("cached baseline %s is corrupted (%s); removed it, fetching it again", path, problem)
        _evict(path)
        tried.append(f"HF cache: {where} (corrupted: {problem}; removed)")
    if constants.HF_HUB_OFFLINE:
        tried.append("Hub: skipped (HF_HUB_OFFLINE is set)")
        return None, ""
    unreachable = hub.unreachable(repo_id, relpath, repo_type="dataset", revision=revision)
    if unreachable:  # asked once: the download would retry for half a minute
        tried.append(f"Hub: {where} (cannot be reached: {unreachable})")
        return None, ""
    try:
        path = Path(hf_hub_download(repo_id, relpath, repo_type="dataset", revision=revision))
    except Exception as error:  # noqa: BLE001 - network, auth and missing files all mean "not there"
        # huggingface_hub writes to a unique temporary file and deletes it on failure: nothing partial is cached.
        tried.append(f"Hub {constants.ENDPOINT}: {where} ({type(error).__name__}: {_first_line(error)})")
        return None, ""
    problem = cached_file_problem(path)
    if problem is not None:
        _evict(path)
        tried.append(f"Hub {constants.ENDPOINT}: {where} (downloaded file does not match its hash: {problem}; removed)")
        return None, ""
    return path, f"Hub {constants.ENDPOINT} {pinned(repo_id, revision, relpath, path)}"


def pinned(repo_id: str, revision: str, relpath: str, path: Path) -> str:
    """Where a Hub file came from, named by the commit it was read at (``repo@<commit>:<relpath>``, then the
    revision asked for when that was a branch or tag): ``main`` moves, so a signature names the commit whose table
    rescaled the scores. The HF cache keeps each file under ``snapshots/<commit>/``."""
    parts = Path(path).parts
    commits = [b for a, b in itertools.pairwise(parts) if a == "snapshots" and _COMMIT.fullmatch(b)]
    if not commits:
        return f"{repo_id}@{revision}:{relpath}"
    commit = commits[-1]
    return f"{repo_id}@{commit}:{relpath}" + ("" if revision == commit else f", revision {revision}")


def cached_file_problem(path: Path) -> str | None:
    """Why a file in the HF cache cannot be trusted, or None.

    The cache names each blob after the Hub's hash of its content (the git blob id, or the sha256 for LFS
    files), so a truncated or altered file is detected by hashing it again.
    """
    blob = Path(os.path.realpath(path))
    name = blob.name
    if re.fullmatch(r"[0-9a-f]{40}", name):
        actual = git_blob_id(blob)
    elif re.fullmatch(r"[0-9a-f]{64}", name):
        actual = sha256_of(blob)
    else:
        return None  # not a content-addressed blob (a cache without symlinks); the parser still checks it
    return None if actual == name else f"content hash {actual[:12]}… != blob name {name[:12]}…"


def _evict(path: Path) -> None:
    blob = Path(os.path.realpath(path))
    for doomed in {path, blob}:
        doomed.unlink(missing_ok=True)


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]
