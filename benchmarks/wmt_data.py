"""Fetch and build the WMT21/22 to-English ratings the benchmarks read: benchmarks/data/human_judgments_toen.tsv.

    python benchmarks/wmt_data.py            # downloads 133 files (67 MB) from GitHub, builds the file
    python benchmarks/wmt_data.py --git WMT21 WMT22   # reads them from local clones of the two repositories

The sources (wmt-conference/wmt21-news-systems and wmt22-news-systems, at the commits pinned below) are for
research use only, so the repository does not hold the file. Each file is checked against its git blob id, the
result against its sha256; columns, derivation, licence and citations: benchmarks/data/README.md.
"""

import argparse
import collections
import csv
import hashlib
import io
import re
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "human_judgments_toen.tsv"
MISSING = f"{DATA.relative_to(HERE.parent)} is missing: run `python benchmarks/wmt_data.py` first (it downloads and builds it)"
SOURCES = HERE / "data" / "sources.txt"
SHA256 = "bd1a4369243fad15946fa3c18027636f9dcca598d32a186c351b0df15178f42c"
RAW = "https://raw.githubusercontent.com/wmt-conference/{repo}/{commit}/{path}"
REPOS = {
    2021: ("wmt21-news-systems", "f41750dadbf2ba6ab01ca5380347d253298a3427"),
    2022: ("wmt22-news-systems", "20240a2e96a50e823ea8cdf37fd8af52547146e3"),
}
#: wmt22's xml of cs-en and zh-en is read where it was last whole (same segments as the final txt files).
XML_COMMIT = {(2022, lp): "dcb465e5b8eb77a4300c27cea716a14694cb5b25" for lp in ("cs-en", "zh-en")}
#: Rows a test set keeps: segments in line order until this many rows, then to the end of that document.
ROWS_PER_SET = 2000
HEADER = ["lp", "year", "system", "seg_id", "candidate", "reference", "human", "n_raters"]
#: A test set: its year, language pair, primary reference's letter, and human references scored as systems.
TestSet = collections.namedtuple("TestSet", "year lp ref dropped", defaults=[()])
#: The test set's file names (xml, txt) by year.
TESTSET = {2021: ("newstest2021", "newstest2021"), 2022: ("wmttest2022", "generaltest2022")}
SETS = [TestSet(2021, "is-en", "A"), TestSet(2021, "ja-en", "A"), TestSet(2021, "ru-en", "A", ("HUMAN",))]
SETS += [TestSet(2022, "cs-en", "B", ("HUMAN-C",)), *(TestSet(2022, lp, "A") for lp in ("ja-en", "liv-en", "ru-en"))]
SETS += [TestSet(2022, "uk-en", "A"), TestSet(2022, "zh-en", "A", ("HUMAN-B",))]
#: DA system names that differ from the system-output file names.
RENAMED = {"Nemo": "NVIDIA-NeMo"}


class Source:
    """Reads a file of one of the two repositories at a commit: from GitHub, or from local clones (``--git``)."""

    def __init__(self, clones: dict[int, Path] | None = None):
        self.clones = clones
        rows = [ln.split("\t") for ln in SOURCES.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
        self.blobs = {(int(year), path): blob for year, path, blob in rows}

    def text(self, year: int, path: str, commit: str | None = None) -> str:
        """The file at ``path`` of that year's repository, at ``commit`` (default: the pinned one), blob id checked."""
        repo, commit = REPOS[year][0], commit or REPOS[year][1]
        if self.clones:
            git = ["git", "-C", str(self.clones[year]), "show", f"{commit}:{path}"]
            done = subprocess.run(git, capture_output=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"{self.clones[year]}: no {path} at {commit[:10]}: {done.stderr.decode().strip()}")
            data = done.stdout
        else:
            with urllib.request.urlopen(RAW.format(repo=repo, commit=commit, path=path), timeout=120) as answer:
                data = answer.read()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if blob != self.blobs.get((year, path)):
            raise SystemExit(f"{path}: git blob {blob}, expected {self.blobs.get((year, path))} ({SOURCES.name})")
        return data.decode("utf-8")


def line_of_sid(xml: str, year: int) -> tuple[dict[int, int], list[int]]:
    """DA's SID k is the k-th segment with documents sorted by id; map it to the test set's line number (xml order,
    test-suite documents and other collections left out). Also: the line each document ends at, in line order."""
    docs = ET.fromstring(xml).findall("./collection[@id='general']/doc" if year == 2022 else "./doc")
    docs = [d for d in docs if "testsuite" not in d.attrib]
    lines, ends, line = {}, [], 0
    for doc in docs:
        n = len(doc.findall("./src//seg"))
        lines[doc.attrib["id"]] = range(line + 1, line + n + 1)
        line += n
        ends.append(line)
    return dict(enumerate((ln for doc_id in sorted(lines) for ln in lines[doc_id]), start=1)), ends


def rows_of(source: Source, ts: TestSet) -> list[list[str]]:
    xml_name, txt_name = TESTSET[ts.year]
    da = "lv-en" if ts.lp == "liv-en" else ts.lp  # the DA files' name of the pair
    humaneval = "humaneval/newstest2021-toen" if ts.year == 2021 else "humaneval/DA/newstest2022-toen"
    xml = source.text(ts.year, f"xml/{xml_name}.{ts.lp}.all.xml", XML_COMMIT.get((ts.year, ts.lp)))
    line, ends = line_of_sid(xml, ts.year)
    refs = source.text(ts.year, f"txt/references/{txt_name}.{ts.lp}.ref.{ts.ref}.en").split("\n")
    raters: dict[tuple[str, int], set[str]] = {}
    head, *body = source.text(ts.year, f"{humaneval}/ad-{da.replace('-', '')}-good-stnd-redup.csv").splitlines()
    for row in (dict(zip(head.split(), line.split("\t"), strict=False)) for line in body):
        if row["type"] in ("SYSTEM", "REPEAT"):
            raters.setdefault((row["sys_id"], int(row["sid"])), set()).add(row["WorkerId"])
    outputs: dict[str, list[str]] = {}
    found, scores = [], source.text(ts.year, f"{humaneval}/ad-seg-scores-{da}.csv").splitlines()[1:]
    for sys_id, sid, raw, z, *_ in (ln.split() for ln in scores):
        sid, raw = int(sid), float(raw)
        system = RENAMED.get(re.sub(r"\.\d+$", "", sys_id), re.sub(r"\.\d+$", "", sys_id))
        if system in ts.dropped or (raw == 0 and float(z) == 0 and (sys_id, sid) not in raters):
            continue
        if system not in outputs:
            outputs[system] = source.text(ts.year, f"txt/system-outputs/{txt_name}.{ts.lp}.hyp.{system}.en").split("\n")
        seg = line[sid]
        if (candidate := outputs[system][seg - 1]).strip():
            found.append((seg, system, candidate, refs[seg - 1], f"{float(z):.6f}", str(len(raters[(sys_id, sid)]))))
    found.sort(key=lambda r: (r[0], r[1]))
    enough = found[min(ROWS_PER_SET, len(found)) - 1][0]  # ROWS_PER_SET rows, then to the end of that document
    last = next(end for end in ends if end >= enough)
    return [[ts.lp, str(ts.year), system, str(seg), *cells] for seg, system, *cells in found if seg <= last]


def build(source: Source, out: Path) -> str:
    writer = csv.writer(buffer := io.StringIO(), delimiter="\t", lineterminator="\n")
    writer.writerow(HEADER)
    for ts in SETS:
        writer.writerows(rows_of(source, ts))
        print(f"{ts.year} {ts.lp}: done", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data := buffer.getvalue().encode("utf-8"))
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", nargs=2, metavar=("WMT21", "WMT22"), type=Path, help="local clones to read instead")
    parser.add_argument("--out", type=Path, default=DATA, help=f"default: {DATA.relative_to(HERE.parent)}")
    args = parser.parse_args(argv)
    digest = build(Source(dict(zip(REPOS, args.git, strict=True)) if args.git else None), args.out)
    print(f"{args.out}: sha256 {digest}")
    if digest != SHA256:
        print(f"expected sha256 {SHA256}: the sources differ from those the figures were measured on", file=sys.stderr)
    return int(digest != SHA256)


if __name__ == "__main__":
    raise SystemExit(main())
