"""Load test of the Space: start app.py on 127.0.0.1 and drive it with concurrent gradio_client users.

    python benchmarks/load_space.py                       # 20 users x 50 requests, writes benchmarks/load_results.md
    python benchmarks/load_space.py --users 20 --requests 500   # 10,000 requests: RSS at 1k, 5k and 10k
    python benchmarks/load_space.py --hostile             # 2 Pair users beside a hostile one (load_hostile.py)

First oversized input on the cold app (refused fast, nothing loaded), then a warm-up, then every user sends pairs
(some with two references) and 5-pair files, each answer checked against the engine here. Reports failures,
latencies per kind and the app's RSS at every tenth of the load (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import common
from common import percentile, rss_mb
from gradio_client import Client, handle_file

import fastbertscore as fb

ROOT = common.ROOT


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50, help="per user")
    parser.add_argument("--batch-every", type=int, default=5, help="every n-th request of a user is a 5-pair file")
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/load_results.md (hostile: …)")
    parser.add_argument("--hostile", action="store_true", help="two Pair users beside a hostile one (load_hostile.py)")
    parser.add_argument("--hostile-requests", type=int, default=200, help="with --hostile: the hostile user's")
    parser.add_argument("--max-seconds", type=float, default=900, help="with --hostile: stop the hostile user then")
    args = parser.parse_args()
    if args.hostile and args.requests == 50:
        args.requests = 40  # per Pair user: the hostile mix's default
    args.out = args.out or common.HERE / ("load_hostile_results.md" if args.hostile else "load_results.md")
    data, tmp = pairs(), Path(tempfile.mkdtemp(prefix="load-space-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = start_app(port)
    try:
        if args.hostile:
            from load_hostile import run_hostile

            report = run_hostile(args, app, f"http://127.0.0.1:{port}/", data, tmp)
        else:
            report = run(args, app, f"http://127.0.0.1:{port}/", data, tmp)
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
        [kind, len(v), f"{statistics.median(v):.3f}", f"{percentile(v, 0.95):.3f}", f"{max(v):.3f}"]
        for kind, v in ((kind, latencies.get(kind)) for kind in ("pair", "two refs", "5-pair file"))
        if v
    ]
    lines += [common.table(["request", "n:", "p50 s:", "p95 s:", "max s:"], body)]
    lines += ["Oversized input on the cold app (before any model load):\n"]
    lines += [common.table(["input", "s:", "answer"], [[w, f"{s:.3f}", m] for w, s, m in refused])]
    if failures:
        lines += ["Failures:\n", *[f"- {f}" for f in failures[:20]]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
