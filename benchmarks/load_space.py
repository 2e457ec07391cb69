"""Load test of the Space: start app.py on 127.0.0.1 and drive it with concurrent gradio_client users.

    python benchmarks/load_space.py                       # 20 users x 50 requests, writes benchmarks/load_results.md
    python benchmarks/load_space.py --users 20 --requests 500   # 10,000 requests: RSS at 1k, 5k and 10k
    python benchmarks/load_space.py --users 4 --requests 10
    python benchmarks/load_space.py --hostile             # 2 Pair users beside a hostile one (load_hostile.py)

Phases, in order:
1. Refusals on a cold app: oversized texts and a batch file with too many rows must fail with the app's
   message, fast, and load nothing (the app's RSS stays put).
2. Warm-up: one request of each kind (loads the model).
3. Load: every user sends single pairs (some with two references) and small batch files (5 pairs), mixed.
   Every answer is checked against the engine's score for the same input computed in this process.
Reports failed requests, p50/p95/max latency per kind, and the app's RSS after warm-up, at every tenth of
the load and at the end (a leak shows as steady growth).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import wmt_data

ROOT = Path(__file__).resolve().parents[1]
DATA = wmt_data.DATA


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def start_app(port: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
    }
    app = subprocess.Popen(
        [sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
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


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def pairs() -> list[tuple[str, str]]:
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    seen = dict.fromkeys((r["candidate"], r["reference"]) for r in rows)
    return list(seen)[:400]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


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
    name = "load_hostile_results.md" if args.hostile else "load_results.md"
    args.out = args.out or ROOT / "benchmarks" / name

    import torch
    from gradio_client import Client, handle_file

    import fastbertscore as fb

    data = pairs()
    tmp = Path(tempfile.mkdtemp(prefix="load-space-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = start_app(port)
    url = f"http://127.0.0.1:{port}/"
    try:
        if args.hostile:
            from load_hostile import run_hostile

            report = run_hostile(args, app, url, data, tmp, Client, handle_file, fb)
        else:
            report = run(args, app, url, data, tmp, Client, handle_file, fb, torch)
    finally:
        app.terminate()
        app.wait(timeout=30)
    args.out.write_text(report, encoding="utf-8")
    print(report)


def run(args, app, url, data, tmp, Client, handle_file, fb, torch) -> str:
    client = Client(url, verbose=False)
    cold = rss_mb(app.pid)

    # 1. refusals on a cold app
    big = tmp / "too_many.csv"
    with big.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["candidate", "reference"], *[[f"c {i}", f"r {i}"] for i in range(2001)]])
    refusals = []
    for what, call in (
        ("text of 4,001 characters", lambda: client.predict("x" * 4001, "a reference", api_name="/score")),
        ("reference of 10,000 characters", lambda: client.predict("a candidate", "y" * 10_000, api_name="/score")),
        (
            "file of 2,001 rows",
            lambda: client.predict(
                handle_file(str(big)),
                "candidate",
                "reference",
                fb.DEFAULT_MODEL,
                "",
                "en",
                False,
                False,
                api_name="/score_file",
            ),
        ),
    ):
        start = time.perf_counter()
        try:
            call()
            message = "ACCEPTED (wrong)"
        except Exception as error:  # noqa: BLE001 - the app's refusal arrives as an AppError
            message = str(error).strip().splitlines()[0][:110]
        refusals.append((what, time.perf_counter() - start, message))
    after_refusals = rss_mb(app.pid)

    # 2. warm-up, and the expected scores computed here with the engine
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL)
    others = [data[(k + 1) % len(data)][1] for k in range(len(data))]
    F = scorer.score([c for c, _ in data], [r for _, r in data])[2].tolist()
    F_other = scorer.score([c for c, _ in data], others)[2].tolist()
    expected = {(k, False): F[k] for k in range(len(data))}
    expected.update({(k, True): max(F[k], F_other[k]) for k in range(len(data))})
    batch_files = []
    for k in range(0, len(data) - 5, 5):
        path = tmp / f"batch_{k}.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([["candidate", "reference"], *data[k : k + 5]])
        batch_files.append(path)
    client.predict(*data[0], api_name="/score")
    client.predict(
        handle_file(str(batch_files[0])),
        "candidate",
        "reference",
        fb.DEFAULT_MODEL,
        "",
        "en",
        False,
        True,
        api_name="/score_file",
    )
    warm = rss_mb(app.pid)

    # 3. load
    latencies = {"pair": [], "two refs": [], "5-pair file": []}
    failures, wrong = [], []
    lock = threading.Lock()
    done = [0]
    samples = []  # (requests done, app RSS MB) at every tenth of the load
    total = args.users * args.requests

    def user(u: int) -> None:
        me = Client(url, verbose=False)
        for i in range(args.requests):
            k = (u * args.requests + i) % len(data)
            start = time.perf_counter()
            try:
                if i % args.batch_every == args.batch_every - 1:
                    kind = "5-pair file"
                    me.predict(
                        handle_file(str(batch_files[k % len(batch_files)])),
                        "candidate",
                        "reference",
                        fb.DEFAULT_MODEL,
                        "",
                        "en",
                        False,
                        True,
                        api_name="/score_file",
                    )
                elif i % 2:
                    kind = "two refs"
                    c, r = data[k]
                    out = me.predict(c, f"{r}\n{others[k]}", api_name="/score")
                    if abs(out["f1"] - expected[(k, True)]) > 1e-5:
                        wrong.append((c, r, out["f1"], expected[(k, True)]))
                else:
                    kind = "pair"
                    c, r = data[k]
                    out = me.predict(c, r, api_name="/score")
                    if abs(out["f1"] - expected[(k, False)]) > 1e-5:
                        wrong.append((c, r, out["f1"], expected[(k, False)]))
            except Exception as error:  # noqa: BLE001 - counted and reported
                with lock:
                    failures.append(f"user {u} request {i}: {type(error).__name__}: {error}"[:200])
                continue
            with lock:
                latencies[kind].append(time.perf_counter() - start)
                done[0] += 1
                if done[0] % max(1, total // 10) == 0:
                    samples.append((done[0], rss_mb(app.pid)))

    start = time.perf_counter()
    with ThreadPoolExecutor(args.users) as pool:
        list(pool.map(user, range(args.users)))
    elapsed = time.perf_counter() - start
    end = rss_mb(app.pid)

    lines = [
        "# Space load test",
        "",
        (
            f"`python benchmarks/load_space.py --users {args.users} --requests {args.requests}` on {cpu_name()} "
            f"({platform.machine()}, torch capability {torch.backends.cpu.get_cpu_capability()}), "
            f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; app.py with queue concurrency 2, default model."
        ),
        "",
        (
            f"- Requests: {total} from {args.users} concurrent gradio_client users in {elapsed:.0f} s "
            f"({total / elapsed:.1f} requests/s); **failed: {len(failures)}**; answers differing from the engine "
            f"(> 1e-5): {len(wrong)}."
        ),
        f"- App RSS: cold {cold:.0f} MB · after the refusals {after_refusals:.0f} MB · after warm-up {warm:.0f} MB · "
        f"at the end {end:.0f} MB; during the load (requests done: MB): "
        + ", ".join(f"{n}: {mb:.0f}" for n, mb in samples)
        + ".",
        f"- Growth from the first tenth of the load to the end: **{end - samples[0][1]:+.0f} MB** "
        f"({samples[0][0]} → {total} requests)."
        if samples
        else "- No RSS samples (fewer than 10 requests).",
        "",
        "| request | n | p50 s | p95 s | max s |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, values in latencies.items():
        if values:
            lines.append(
                f"| {kind} | {len(values)} | {statistics.median(values):.3f} | {percentile(values, 0.95):.3f} | "
                f"{max(values):.3f} |"
            )
    lines += [
        "",
        "Oversized input on the cold app (before any model load):",
        "",
        "| input | s | answer |",
        "|---|---:|---|",
    ]
    lines += [f"| {what} | {seconds:.3f} | {message} |" for what, seconds, message in refusals]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {f}" for f in failures[:20]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
