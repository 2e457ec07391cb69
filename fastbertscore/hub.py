"""Whether the Hugging Face Hub can be reached, asked once, without retries.

huggingface_hub retries a failed download several times with backoff: without network, a model or baseline that is
not cached would take most of a minute and dozens of log lines to fail. Callers ask here first and
fail at once, in one line, when the network (not the Hub) says no.
"""

from __future__ import annotations


def unreachable(
    repo_id: str, filename: str, *, repo_type: str | None = None, revision: str | None = None
) -> str | None:
    """Why the Hub cannot be reached for this file, or ``None`` when it answers (with anything, a 404 included)."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import HfHubHTTPError

    try:
        url = hf_hub_url(repo_id, filename, repo_type=repo_type, revision=revision)
        get_hf_file_metadata(url, timeout=constants.HF_HUB_ETAG_TIMEOUT)
    except HfHubHTTPError:
        return None  # the Hub answered: the download reports what it said
    except ValueError:
        return None  # not a valid repo id: the caller's loader says so
    except Exception as error:  # noqa: BLE001 - DNS, refused connection, timeout, proxy: the network, not the id
        return f"{constants.ENDPOINT}: {one_line(error) or type(error).__name__}"
    return None


def looks_like_path(name: str) -> bool:
    """``./x``, ``../x``, ``/x``, ``~/x`` (and Windows' ``C:\\x``, ``.\\x``): a path, never a Hub id."""
    return name.startswith((".", "/", "~", "\\")) or (len(name) > 2 and name[1] == ":" and name[2] in "/\\")


def one_line(error: Exception) -> str:
    """An error's text on one line (transformers' messages run over several), for a one-line CLI or UI error."""
    return " ".join(str(error).split())
