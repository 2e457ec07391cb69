"""Load test of the Space: start app.py on 127.0.0.1 and drive it with concurrent gradio_client users.

    python benchmarks/load_space.py                       # 20 users x 50 requests, writes benchmarks/load_results.md
    python benchmarks/load_space.py --users 20 --requests 500   # 10,000 requests: RSS at 1k, 5k and 10k
    python benchmarks/load_space.py --hostile --requests 40 --hostile-requests 200   # load_hostile_results.md

The plain run: first oversized input on the cold app (refused fast, nothing loaded), then a warm-up, then every user
sends pairs (some with two references) and 5-pair files, each answer checked against the engine here. Reports
failures, latencies per kind and the app's RSS at every tenth of the load (docs/reliability.md).

``--hostile``: two users send Pair requests, alone and then while a third loops over the worst requests the Space
refuses or bounds by work (bounded in count and time). Reports the users' p50/p95 and failures in each run, each
hostile request's time and outcome, and the app's RSS before and after them (docs/space.md, "Under hostile load").
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import common
from common import percentile, rss_mb
from gradio_client import Client, handle_file

import fastbertscore as fb

ROOT = common.ROOT
#: Hostile requests answered within this many seconds are counted.
WITHIN_S = 2.0
UPLOAD_MB = 50
#: Seconds a hostile request may take before it is reported as still running: a request stops at the Space's
#: deadline, and a request at the work budget may wait that long for the one before it.
REQUEST_TIMEOUT_S = 3 * 120
#: Languages the hostile user asks for, a new one each time (known codes: each is a baseline lookup once).
LANGUAGES = (
    "af sq ar an hy ast az ba eu bar be bn bpy bs br bg my ca ceb ce cv hr cs da nl et fi fr gl ka de el".split()
)


def start_app(port: int) -> subprocess.Popen:
    env = {**os.environ, **common.ENV, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port)}
    env["GRADIO_ANALYTICS_ENABLED"] = "False"
    app = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline:
        if app.poll() is not None:
            raise RuntimeError(f"app.py exited with code {app.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return app
        except OSError:
            time.sleep(0.3)
    app.kill()
    raise RuntimeError("app.py did not start within 120 s")


def pairs() -> list[tuple[str, str]]:
    return list(dict.fromkeys((r["candidate"], r["reference"]) for r in common.rows()))[:400]


def score_file(client, path: Path, keep: bool = True):
    """The Batch tab's request for the file at ``path`` (columns candidate, reference), default model."""
    file = handle_file(str(path))
    return client.predict(
        file, "candidate", "reference", fb.DEFAULT_MODEL, "", "en", False, keep, api_name="/score_file"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50, help="per user")
    parser.add_argument("--batch-every", type=int, default=5, help="every n-th request of a user is a 5-pair file")
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/load_results.md (hostile: …)")
    parser.add_argument("--hostile", action="store_true", help="two Pair users beside a hostile one")
    parser.add_argument("--hostile-requests", type=int, default=200, help="with --hostile: the hostile user's")
    parser.add_argument("--max-seconds", type=float, default=900, help="with --hostile: stop the hostile user then")
    args = parser.parse_args(argv)
    if args.hostile and args.requests == 50:
        args.requests = 40  # per Pair user: the hostile mix's default
    args.out = args.out or common.HERE / ("load_hostile_results.md" if args.hostile else "load_results.md")
    data, tmp = pairs(), Path(tempfile.mkdtemp(prefix="load-space-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = start_app(port)
    try:
        report = (run_hostile if args.hostile else run)(args, app, f"http://127.0.0.1:{port}/", data, tmp)
    finally:
        app.terminate()
        app.wait(timeout=30)
    args.out.write_text(report, encoding="utf-8")
    print(report)


def refusals(client, tmp: Path) -> list[tuple[str, float, str]]:
    """Oversized input on the cold app: what each gets, and how fast."""
    big = tmp / "too_many.csv"
    with big.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["candidate", "reference"], *[[f"c {i}", f"r {i}"] for i in range(2001)]])
    answers = []
    for what, call in (
        ("text of 4,001 characters", lambda: client.predict("x" * 4001, "a reference", api_name="/score")),
        ("reference of 10,000 characters", lambda: client.predict("a candidate", "y" * 10_000, api_name="/score")),
        ("file of 2,001 rows", lambda: score_file(client, big, keep=False)),
    ):
        seconds, message = common.attempt(call)  # the app's refusal arrives as an AppError
        answers.append((what, seconds, "ACCEPTED (wrong)" if message is None else message[:110]))
    return answers


def expected_scores(data: list[tuple[str, str]]) -> tuple[dict, list[str]]:
    """The engine's F here for each pair (k, False) and with a second reference (k, True); the second references."""
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL)
    others = [data[(k + 1) % len(data)][1] for k in range(len(data))]
    F = scorer.score([c for c, _ in data], [r for _, r in data])[2].tolist()
    F_other = scorer.score([c for c, _ in data], others)[2].tolist()
    expected = {(k, False): F[k] for k in range(len(data))}
    return {**expected, **{(k, True): max(F[k], F_other[k]) for k in range(len(data))}}, others


def run(args, app, url, data, tmp) -> str:
    client = Client(url, verbose=False)
    cold = rss_mb(app.pid)
    refused = refusals(client, tmp)  # 1. refusals on a cold app
    after_refusals = rss_mb(app.pid)
    expected, others = expected_scores(data)  # 2. warm-up, and the expected scores computed here with the engine
    batch_files = []
    for k in range(0, len(data) - 5, 5):
        batch_files.append(tmp / f"batch_{k}.csv")
        with batch_files[-1].open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([["candidate", "reference"], *data[k : k + 5]])
    client.predict(*data[0], api_name="/score")
    score_file(client, batch_files[0])
    warm = rss_mb(app.pid)
    wrong, samples, total = [], [], args.users * args.requests  # samples: (requests done, app RSS MB) per tenth

    def send(me, u: int, i: int) -> str:  # 3. load
        k = (u * args.requests + i) % len(data)
        if i % args.batch_every == args.batch_every - 1:
            score_file(me, batch_files[k % len(batch_files)])
            return "5-pair file"
        c, r = data[k]
        f1 = me.predict(c, f"{r}\n{others[k]}" if i % 2 else r, api_name="/score")["f1"]
        if abs(f1 - expected[(k, bool(i % 2))]) > 1e-5:
            wrong.append((c, r, f1, expected[(k, bool(i % 2))]))
        return "two refs" if i % 2 else "pair"

    def sample(done: int) -> None:
        if done % max(1, total // 10) == 0:
            samples.append((done, rss_mb(app.pid)))

    start = time.perf_counter()
    latencies, failures = common.drive(url, args.users, args.requests, send, sample)
    elapsed, end = time.perf_counter() - start, rss_mb(app.pid)
    growth = (
        f"- Growth from the first tenth of the load to the end: **{end - samples[0][1]:+.0f} MB** "
        f"({samples[0][0]} → {total} requests)."
        if samples
        else "- No RSS samples (fewer than 10 requests)."
    )
    lines = [
        "# Space load test\n",
        (
            f"`python benchmarks/load_space.py --users {args.users} --requests {args.requests}` on "
            f"{common.machine()}; app.py with queue concurrency 2, default model.\n"
        ),
        (
            f"- Requests: {total} from {args.users} concurrent gradio_client users in {elapsed:.0f} s "
            f"({total / elapsed:.1f} requests/s); **failed: {len(failures)}**; answers differing from the engine "
            f"(> 1e-5): {len(wrong)}."
        ),
        f"- App RSS: cold {cold:.0f} MB · after the refusals {after_refusals:.0f} MB · after warm-up {warm:.0f} MB · "
        f"at the end {end:.0f} MB; during the load (requests done: MB): "
        + ", ".join(f"{n}: {mb:.0f}" for n, mb in samples)
        + ".",
        growth + "\n",
    ]
    body = [
        [kind, *latency(v), f"{max(v):.3f}"]
        for kind in ("pair", "two refs", "5-pair file")
        if (v := latencies.get(kind))
    ]
    lines += [common.table(["request", "n:", "p50 s:", "p95 s:", "max s:"], body)]
    lines += ["Oversized input on the cold app (before any model load):\n"]
    lines += [common.table(["input", "s:", "answer"], [[w, f"{s:.3f}", m] for w, s, m in refused])]
    if failures:
        lines += ["Failures:\n", *[f"- {f}" for f in failures[:20]]]
    return "\n".join(lines) + "\n"


def distinct_words(k: int, n: int) -> str:
    """``n`` distinct-looking words, the same for the same ``k``."""
    return " ".join(f"w{(k * 7919 + i * 104729) % 1_000_003}" for i in range(n))


def at_budget_file(tmp: Path) -> Path:
    """A Batch file of 2,000 rows of distinct texts whose counted work is just under the Space's budget."""
    path, n = tmp / "at_budget.csv", 4
    for _ in range(3):  # the work grows with the words per text: two corrections land within a few percent
        rows = [
            "candidate,reference",
            *(f"{distinct_words(2 * r, n)},{distinct_words(2 * r + 1, n)}" for r in range(2000)),
        ]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        job = fb.space.score_file(str(path), "candidate", "reference", run=lambda job: job)  # checked, not run
        n = max(1, int(n * 0.97 * fb.space.WORK_BUDGET / job.work))
    return path


def uploads(tmp: Path) -> dict[str, Path]:
    """The uploads of the mix, written once."""
    texts = {
        "over_budget.csv": "candidate,r1,r2,r3,r4\n"  # the issue's: 2,000 rows × (1 + 4) distinct long texts
        + "".join(",".join(distinct_words(5 * r + k, 60) for k in range(5)) + "\n" for r in range(2000)),
        "million_rows.csv": "candidate,reference\n" + "a,b\n" * 1_000_000,
        "nested.jsonl": '{"candidate": "a", "reference": "b"}\n' + "[" * 200_000 + "\n",
        "small.csv": "candidate,reference\nThe cat sat.,A cat sat.\n",
        "huge_cell.jsonl": json.dumps({"candidate": "a", "reference": ["b"] * 1_000_000}) + "\n",
        "wide.csv": "candidate," + ",".join(f"r{k}" for k in range(8)) + "\n" + ("a" + ",b" * 8 + "\n") * 2000,
        **{f"system{k}.txt": "a\nb\n" for k in range(fb.space.MAX_SYSTEMS + 1)},
    }
    for name, text in texts.items():
        (tmp / name).write_text(text, encoding="utf-8")
    return {name.split(".")[0]: tmp / name for name in texts} | {"at_budget": at_budget_file(tmp)}


def hostile_requests(url: str, tmp: Path) -> list[tuple[str, object]]:
    """(what, call) for the worst requests of the Space's limits, each a call that raises when refused: first those
    bounded by work rather than by count, and the parse-heavy uploads."""
    import httpx

    client, files, turns = Client(url, verbose=False), uploads(tmp), {"layer": 0, "model": 0, "lang": 0}
    systems = [files[f"system{k}"] for k in range(fb.space.MAX_SYSTEMS + 1)]
    other_model = "roberta-large"  # a model with a published baseline: allowed, and loaded only if cached

    def predict(*args, api_name):
        return client.submit(*args, api_name=api_name).result(timeout=REQUEST_TIMEOUT_S)

    def batch(name: str, references: str = "reference"):
        return lambda: predict(handle_file(str(files[name])), "candidate", references, api_name="/score_file")

    def pair(*options, turn: str, choices: tuple):
        def call():
            turns[turn] += 1
            return predict("a", "b", *options, choices[turns[turn] % len(choices)], api_name="/score")

        return call

    def upload(name: str, data: bytes, timeout: float = 60) -> dict:
        answer = httpx.post(url + "gradio_api/upload", files={"files": (name, data)}, timeout=timeout)
        if answer.status_code != 200:
            raise RuntimeError(f"HTTP {answer.status_code}: {answer.text[:80]}")
        return {"path": answer.json()[0], "orig_name": name, "meta": {"_type": "gradio.FileData"}}

    # uploaded once: later requests name the server's copy, so they time the refusal alone
    on_server = [upload(s.name, s.read_bytes()) for s in systems]
    big = b"candidate,reference\n" + b"x" * (UPLOAD_MB * 1_000_000)
    pasted = "=== a\nx\ny\n=== b\nx\ny\n"
    return [
        (f"a file at the work budget ({fb.space.WORK_BUDGET:,} tokens)", batch("at_budget")),
        ("10,000 distinct long texts (over the work budget)", batch("over_budget", "r1,r2,r3,r4")),
        ("layers 1 and 2 in turn", pair(fb.DEFAULT_MODEL, turn="layer", choices=("1", "2"))),
        (f"{fb.DEFAULT_MODEL} and {other_model} in turn", pair(turn="model", choices=(fb.DEFAULT_MODEL, other_model))),
        ("a new language each time", pair(fb.DEFAULT_MODEL, "", turn="lang", choices=LANGUAGES)),
        ("1,000,000 tiny rows", batch("million_rows")),
        ("a JSONL line of 200,000 '['", batch("nested")),
        (
            "n_samples=100,000,000",
            lambda: predict(None, "x\ny", None, pasted, "paired bootstrap", 100_000_000, 1, api_name="/compare"),
        ),
        ("5,000 reference columns", batch("small", "reference," * 5000)),
        ("JSONL cell of 1,000,000 references", batch("huge_cell")),
        ("2,000 rows x 8 references", batch("wide", ",".join(f"r{k}" for k in range(8)))),
        (
            f"{len(systems)} system files, uploaded with the request",
            lambda: predict(None, "a\nb", [handle_file(str(s)) for s in systems], "", api_name="/compare"),
        ),
        (
            f"{len(systems)} system files, uploaded before",
            lambda: predict(None, "a\nb", on_server, "", api_name="/compare"),
        ),
        ("model off the list", lambda: predict("a", "b", "someone/any-model", api_name="/score")),
        ("layer 999", lambda: predict("a", "b", fb.DEFAULT_MODEL, "999", api_name="/score")),
        (f"{UPLOAD_MB} MB upload", lambda: upload("big.csv", big, timeout=REQUEST_TIMEOUT_S)),
    ]


def pair_users(url, data, requests: int) -> tuple[list[float], list[str]]:
    """Two clients sending ``requests`` Pair requests each: the latencies and the failures."""

    def send(client, u: int, i: int) -> str:
        client.submit(*data[(u * requests + i) % len(data)], api_name="/score_pair").result(timeout=REQUEST_TIMEOUT_S)
        return "pair"

    latencies, failures = common.drive(url, 2, requests, send)
    return latencies.get("pair", []), failures


def run_hostile(args, app, url, data, tmp) -> str:
    client = Client(url, verbose=False)
    client.predict(*data[0], api_name="/score_pair")  # warm-up: loads the model
    quiet, quiet_failures = pair_users(url, data, args.requests)
    calls = hostile_requests(url, tmp)
    for _, call in calls:  # one round before measuring: the app's first answers allocate what they keep
        common.attempt(call)
    rss_before = rss_mb(app.pid)
    outcomes: list[tuple[str, float, str]] = []
    deadline = time.time() + args.max_seconds

    def hostile() -> None:
        for k in range(args.hostile_requests):
            if time.time() > deadline:
                break
            what, call = calls[k % len(calls)]
            seconds, message = common.attempt(call)
            kind = "stopped at its deadline" if (message or "").startswith("This request was stopped") else "refused"
            outcomes.append((what, seconds, "finished" if message is None else f"{kind}: {message[:100]}"))

    with ThreadPoolExecutor(1) as pool:
        attacker = pool.submit(hostile)
        loud, loud_failures = pair_users(url, data, args.requests)
        attacker.result()
    rss_after = rss_mb(app.pid)
    return hostile_report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after)


def latency(values: list[float]) -> list:
    """A table's cells for these latencies: their count, p50 and p95."""
    return (
        [len(values), f"{statistics.median(values):.3f}", f"{percentile(values, 0.95):.3f}"]
        if values
        else [0, "–", "–"]
    )


def hostile_report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    ratio = percentile(loud, 0.95) / percentile(quiet, 0.95) if quiet and loud else float("nan")
    refused = sum(o.startswith("refused") for _, _, o in outcomes)
    refused_fast = sum(o.startswith("refused") and t <= WITHIN_S for _, t, o in outcomes)
    stopped = sum(o.startswith("stopped") for _, _, o in outcomes)
    finished = sum(o == "finished" for _, _, o in outcomes)
    slowest_finished = max([t for _, t, o in outcomes if o == "finished"], default=0.0)
    users = [["alone", *latency(quiet), len(quiet_failures)]]
    users += [["beside the hostile user", *latency(loud), len(loud_failures)]]
    hostile = []
    for what in dict.fromkeys(w for w, _, _ in outcomes):
        times = [s for w, s, _ in outcomes if w == what]
        answers = " / ".join(a.replace("|", "/") for a in sorted({o for w, _, o in outcomes if w == what}))
        hostile.append([what, len(times), f"{max(times):.3f}", f"{statistics.median(times):.3f}", answers])
    lines = [
        "# Space under hostile load\n",
        (
            f"`python benchmarks/load_space.py --hostile --requests {args.requests} --hostile-requests "
            f"{args.hostile_requests}` on {common.machine()}; load average at the end {load}. app.py on 127.0.0.1, "
            "default model.\n"
        ),
        common.table(["two users' Pair requests", "n:", "p50 s:", "p95 s:", "failed:"], users),
        f"- p95 beside the hostile user / alone: **{ratio:.2f}×**.",
        (
            f"- App RSS before the hostile requests {rss_before:.0f} MB, after {len(outcomes)}: {rss_after:.0f} MB "
            f"(**{rss_after - rss_before:+.0f} MB**)."
        ),
        (
            f"- Hostile requests refused within {WITHIN_S:g} s: **{refused_fast} of {refused}**; stopped at their "
            f"deadline: **{stopped}**; accepted and finished: **{finished}** (the slowest {slowest_finished:.1f} s).\n"
        ),
        common.table(["hostile request", "n:", "max s:", "median s:", "outcome"], hostile),
    ]
    for name, failures in (("alone", quiet_failures), ("beside the hostile user", loud_failures)):
        if failures:
            lines += [f"Failures ({name}):\n", *[f"- {f}" for f in failures[:20]], ""]
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    main()
