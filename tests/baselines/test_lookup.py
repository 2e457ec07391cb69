"""Baselines: shipped files, a real Hub-compatible server (olah on 127.0.0.1), and clear errors.

Hub pulls run in subprocesses, because huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE at import.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import bert_score
import pytest
import torch
from hub import FIND_BASELINE, run_python, serve_dataset_repo
from paths import REPO
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.baselines.lookup import SHIPPED_DIRS, baseline_relpath, find_baseline
from fastbertscore.baselines.table import MAX_BASELINE, BaselineError, parse_baseline, read_baseline

HUB_REPO = "testorg/baselines"
from paths import MINILM


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """olah serving a dataset repo with a baseline that exists nowhere else, and a broken one."""
    root = tmp_path_factory.mktemp("hub")
    table = "LAYER,P,R,F\n" + "".join(f"{i},{0.1 + i / 20},{0.15 + i / 20},{0.12 + i / 20}\n" for i in range(7))
    files = {"de/sentence-transformers/all-MiniLM-L6-v2.tsv": table, "fr/acme/broken.tsv": "LAYER,P,R,F\n0,0.1,0.2\n"}
    for port in serve_dataset_repo(root, HUB_REPO, files):
        repo = root / "mirrors" / "datasets" / HUB_REPO
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        yield {"endpoint": f"http://127.0.0.1:{port}", "table": table, "root": root, "commit": commit.stdout.strip()}


def _run(code: str, env_extra: dict) -> dict:
    return run_python(code, env_extra)[0]


@pytest.mark.hub
@pytest.mark.slow
def test_hub_only_baseline_is_pulled_cached_then_used_offline(hub, tmp_path):
    env = {"HF_ENDPOINT": hub["endpoint"], "HF_HOME": str(tmp_path / "hf"), "FASTBERTSCORE_BASELINE_REPO": HUB_REPO}
    first = _run(FIND_BASELINE.format(lang="de", model=MINILM), env)
    # main moves: the source names the commit the table was read at, then the revision asked for
    where = f"{HUB_REPO}@{hub['commit']}:de/sentence-transformers/all-MiniLM-L6-v2.tsv, revision main"
    assert first["source"] == f"Hub {hub['endpoint']} {where}"
    assert first["text"] == hub["table"] and first["path"].startswith(str(tmp_path / "hf"))
    offline = _run(
        FIND_BASELINE.format(lang="de", model=MINILM),
        {**env, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"},
    )
    assert offline["source"] == f"HF cache {where}" and offline["text"] == hub["table"]
    pinned = _run(
        FIND_BASELINE.format(lang="de", model=MINILM),
        {**env, "HF_HUB_OFFLINE": "1", "FASTBERTSCORE_BASELINE_REVISION": hub["commit"]},
    )
    assert pinned["source"] == f"HF cache {HUB_REPO}@{hub['commit']}:de/sentence-transformers/all-MiniLM-L6-v2.tsv"


@pytest.mark.hub
@pytest.mark.slow
def test_hub_baseline_rescales_scores(hub, tmp_path):
    code = f"""
import json, fastbertscore as fb
cands, refs = ["the cat sat on the mat", "it rains"], ["a cat was on the mat", "rain falls"]
(P, R, F), h = fb.score(cands, refs, model_type={MINILM!r}, num_layers=3, lang="de", rescale_with_baseline=True, return_hash=True)
raw = fb.score(cands, refs, model_type={MINILM!r}, num_layers=3)
signature = fb.BERTScorer(model_type={MINILM!r}, num_layers=3, lang="de", rescale_with_baseline=True).signature
print(json.dumps({{"rescaled": [P.tolist(), R.tolist(), F.tolist()], "raw": [x.tolist() for x in raw], "hash": h,
                  "rescale": signature.rescale, "source": signature.baseline_source, "long": str(signature)}}))
"""
    env = {"HF_ENDPOINT": hub["endpoint"], "HF_HOME": str(tmp_path / "hf"), "FASTBERTSCORE_BASELINE_REPO": HUB_REPO}
    out = _run(code, env)
    baseline = parse_baseline(hub["table"], "hub")[3]
    expected = (torch.tensor(out["raw"]).T - baseline) / (1 - baseline)
    assert_scores_close(torch.tensor(out["rescaled"]), expected.T, baseline=baseline)
    assert ")-rescaled_baseline=" in out["hash"] and "custom" not in out["hash"]
    where = f" {HUB_REPO}@{hub['commit']}:de/sentence-transformers/all-MiniLM-L6-v2.tsv, revision main"
    assert out["rescale"] == "baseline" and out["source"].endswith(where)
    assert f"{where})|lang:de|" in out["long"]  # the long form names the commit the table was read at


@pytest.mark.hub
@pytest.mark.slow
def test_missing_baseline_lists_what_was_tried(hub, tmp_path):
    env = {"HF_ENDPOINT": hub["endpoint"], "HF_HOME": str(tmp_path / "hf"), "FASTBERTSCORE_BASELINE_REPO": HUB_REPO}
    out = _run(FIND_BASELINE.format(lang="de", model="acme/unknown-model"), env)
    message = out["error"]
    assert "no rescaling baseline for model 'acme/unknown-model' and lang='de'" in message
    assert "shipped:" in message and "HF cache:" in message and f"Hub {hub['endpoint']}" in message
    assert "bertscore-baseline build --model acme/unknown-model --lang de" in message


@pytest.mark.hub
@pytest.mark.slow
def test_malformed_baseline_from_the_hub_names_the_file(hub, tmp_path):
    code = (
        FIND_BASELINE.format(lang="fr", model="acme/broken")
        + """
from fastbertscore.baselines.table import read_baseline
try:
    read_baseline(path)
except BaselineError as e:
    print(json.dumps({"error": str(e)}))
"""
    )
    env = {"HF_ENDPOINT": hub["endpoint"], "HF_HOME": str(tmp_path / "hf"), "FASTBERTSCORE_BASELINE_REPO": HUB_REPO}
    out = _run(code, env)
    assert "broken.tsv line 2: expected 4 columns, got 3" in out["error"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is empty"),
        ("LAYER,P,R\n0,1,2\n", "has header"),
        ("LAYER,P,R,F\n", "has a header but no rows"),
        ("LAYER,P,R,F\n0,0.1,x,0.3\n", "not a number"),
        ("LAYER,P,R,F\n1,0.1,0.2,0.3\n", "expected layer 0"),
        ("LAYER,P,R,F\n0,0.1,0.2,1.5\n", "finite values below 1"),
        ("LAYER,P,R,F\n0,0.1,0.2,0.99999999\n", r"finite values below 1 \(as float32"),  # 1.0 in float32
        ("LAYER,P,R,F\n0,0.1,1e39,0.3\n", r"finite values below 1 \(as float32"),  # infinite in float32
    ],
)
def test_malformed_tables(tmp_path, text, message):
    path = tmp_path / "bad.tsv"
    path.write_text(text)
    with pytest.raises(BaselineError, match=message) as info:
        read_baseline(path)
    assert str(path) in str(info.value)


def test_imported_files_parse_exactly_as_bert_score_reads_them():
    import pandas as pd

    source = Path(bert_score.__file__).parent / "rescale_baseline"
    files = sorted(source.rglob("*.tsv"))
    assert len(files) == 72
    for path in files:
        relpath = path.relative_to(source).as_posix()
        shipped = next(d / relpath for d in SHIPPED_DIRS if (d / relpath).exists())
        assert shipped.read_bytes() == path.read_bytes()
        theirs = torch.from_numpy(pd.read_csv(path).to_numpy())[:, 1:].float()
        assert torch.equal(read_baseline(shipped), theirs), relpath


def test_shipped_baseline_found_without_network():
    path, source = find_baseline("en", "roberta-large")
    assert source.startswith("shipped file") and path.name == "roberta-large.tsv"
    assert find_baseline("en", "microsoft/deberta-xlarge-mnli")[0].parent.name == "microsoft"


@pytest.mark.parametrize("lang, model", [("en", "../../etc/passwd"), ("../en", "roberta-large"), ("en", "/abs/model")])
def test_names_cannot_escape_the_baseline_folder(lang, model):
    with pytest.raises(BaselineError, match="not a safe path part|a folder path names none"):
        baseline_relpath(lang, model)


@pytest.mark.parametrize("model", ["/models/tiny-bart", "./tiny-bart", "../m/tiny-bart", "~/tiny-bart"])
def test_a_folder_path_is_told_that_baselines_are_filed_by_model_id(model):
    with pytest.raises(
        BaselineError,
        match=r"baselines are filed under Hub model ids, and a folder path names none\. "
        r"Pass baseline_path=",
    ):
        baseline_relpath("en", model)


def test_missing_baseline_is_an_error_not_unrescaled_scores(minilm_path):
    with pytest.raises(
        BaselineError, match="no rescaling baseline for model 'sentence-transformers/all-MiniLM-L6-v2' and lang='fi'"
    ):
        fb.score(["a"], ["b"], model_type=minilm_path, lang="fi", rescale_with_baseline=True)


def test_manifest_covers_every_file():
    manifest = json.loads((REPO / "baselines" / "manifest.json").read_text())
    files = {p.relative_to(REPO / "baselines").as_posix() for p in (REPO / "baselines").rglob("*.tsv")}
    assert set(manifest["files"]) == files
    from fastbertscore.files import sha256_of

    for relpath, entry in manifest["files"].items():
        assert entry["sha256"] == sha256_of(REPO / "baselines" / relpath), relpath


def test_default_model_rescales_offline_with_its_computed_baseline(minilm_path, mt_pairs):
    cands, refs = mt_pairs[0][:10], mt_pairs[1][:10]
    (P, R, F), hashcode = fb.score(
        cands, refs, model_type=MINILM, lang="en", rescale_with_baseline=True, return_hash=True
    )
    assert ")-rescaled_baseline=" in hashcode and "custom" not in hashcode
    path, source = find_baseline("en", minilm_path)  # the embedded folder is filed under its Hub id
    assert source.startswith("shipped file") and path.parts[-2:] == ("sentence-transformers", "all-MiniLM-L6-v2.tsv")
    b = read_baseline(path)[fb.MODEL2LAYERS[MINILM]]  # the tuned layer, used when num_layers is not given
    raw = fb.score(cands, refs, model_type=MINILM)
    assert_scores_close((P, R, F), [(x - b[i]) / (1 - b[i]) for i, x in enumerate(raw)], baseline=b)
    entry = json.loads((REPO / "baselines" / "manifest.json").read_text())["files"][
        "en/sentence-transformers/all-MiniLM-L6-v2.tsv"
    ]
    assert entry["source"] == "computed" and entry["pairs"] == 100_000 and entry["max_standard_error_F"] < 1e-3


@pytest.mark.parametrize("value", ["0.9999999", "0.995", "0.9900001"])
def test_a_baseline_value_above_the_plausible_bound_is_refused_naming_file_line_and_column(tmp_path, value):
    path = tmp_path / "custom.csv"
    path.write_text(f"LAYER,P,R,F\n0,0.1,0.2,0.3\n1,0.2,{value},0.3\n")
    with pytest.raises(BaselineError) as info:
        read_baseline(path)
    assert str(info.value).startswith(
        f"baseline file {path} line 3 (layer 1), column R: {value} is above {MAX_BASELINE}, the largest plausible"
    )
    if value == "0.9999999":  # the case: raw 0.5 would have rescaled to -4,194,303
        assert "raw 0.5 would become -4194303" in str(info.value)
    path.write_text(f"LAYER,P,R,F\n0,0.1,0.2,0.3\n1,0.2,{MAX_BASELINE},0.3\n")  # the bound itself is accepted
    assert read_baseline(path)[1, 1] == torch.tensor(MAX_BASELINE, dtype=torch.float32)


def test_every_published_baseline_is_within_the_plausible_bound():
    source = Path(bert_score.__file__).parent / "rescale_baseline"
    tables = [read_baseline(path) for path in sorted(source.rglob("*.tsv"))]  # each one accepted
    assert len(tables) == 72
    assert 0.98 < max(float(t.max()) for t in tables) <= MAX_BASELINE
