"""Where the tests find the repository, their own small data, and the optional shared data."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: 120 rows of the WMT to-English judgments, kept here so that every test runs without the whole file.
RATINGS = DATA / "wmt_toen_sample.tsv"
#: The whole file (19,238 rows), which ``python benchmarks/wmt_data.py`` fetches and builds: benchmarks and optional
#: long tests only, skipped when absent.
SHARED_RATINGS = REPO / "benchmarks" / "data" / "human_judgments_toen.tsv"
SHIPPED_BASELINE = REPO / "baselines" / "en" / "sentence-transformers" / "all-MiniLM-L6-v2.tsv"
#: The embedded default model (all-MiniLM-L6-v2, shipped inside a PyPI package): every test that scores real
#: text names it through this one constant; ``conftest.minilm_path`` is its folder.
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
