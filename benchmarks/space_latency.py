"""Latency of the Space's Pair tab on long texts (the 3,990-character pair must answer with
p95 ≤ 3 s on a 2-core CPU). Starts app.py on 127.0.0.1 and calls its ``score_pair`` endpoint with gradio_client,
as the Score button does: scores, the explanation, the heatmap drawn and encoded as PNG, the answer sent back (the
browser's drawing is not counted).

    python benchmarks/space_latency.py                 # writes benchmarks/space_latency_results.md
    python benchmarks/space_latency.py --requests 40 --concurrency 2 --runs 10 --out /tmp/latency.md

The first request loads the model and is reported on its own. Then (1) ``--requests`` requests of the
3,990-character pair from ``--concurrency`` gradio_client users at once (2: the queue concurrency the load
benchmark, benchmarks/load_space.py, runs app.py with), reported as p50, p95 and max; (2) each case alone,
``--runs`` times, as median and slowest. The machine's load average (``uptime``) is recorded at the start and the
end: other work on the machine shows in these numbers.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from load_space import cpu_name, percentile, start_app

import fastbertscore as fb

HERE = Path(__file__).resolve().parent
LONG = ("The committee discussed the budget and the plans for next year. " * 62)[:3990]
OTHER = ("Members of the board argued about money, schools, roads and the new hospital until late at night. " * 41)[
    :4000
]
CASES = {
    "3,990-character candidate, 35-character reference": (
        LONG,
        "The committee discussed the budget.",
    ),
    "4,000-character candidate, 4,000-character reference": (LONG[:3990] + " Then", OTHER),
    "short pair (41 and 71 characters)": (
        "The president met the minister in Paris.",
        "The president met the prime minister in Paris and signed a trade deal.",
    ),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each case alone")
    parser.add_argument("--requests", type=int, default=20, help="requests of the 3,990-character pair under load")
    parser.add_argument("--concurrency", type=int, default=2, help="users sending them at once")
    parser.add_argument("--out", type=Path, default=HERE / "space_latency_results.md")
    args = parser.parse_args(argv)
    from gradio_client import Client

    load = os.getloadavg()
    port = free_port()
    app = start_app(port)
    try:
        url = f"http://127.0.0.1:{port}/"
        client = Client(url, verbose=False)
        args_of = lambda c, r: (c, r, fb.DEFAULT_MODEL, "", "en", False, True, "float32")
        call = lambda c, r: client.predict(*args_of(c, r), api_name="/score_pair")
        repro = CASES[next(iter(CASES))]
        start = time.perf_counter()
        call(*repro)
        first = time.perf_counter() - start
        users = [Client(url, verbose=False) for _ in range(args.concurrency)]

        def one(k: int) -> float:
            begin = time.perf_counter()
            users[k % args.concurrency].predict(*args_of(*repro), api_name="/score_pair")
            return time.perf_counter() - begin

        with ThreadPoolExecutor(args.concurrency) as pool:
            loaded = list(pool.map(one, range(args.requests)))
        rows = []
        for name, (cand, ref) in CASES.items():
            assert len(cand) <= 4000 and len(ref) <= 4000, name
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                call(cand, ref)
                times.append(time.perf_counter() - start)
            rows.append(f"| {name} | {statistics.median(times):.2f} | {max(times):.2f} |")
    finally:
        app.terminate()
        app.wait(timeout=30)
    end = os.getloadavg()
    p50, p95 = statistics.median(loaded), percentile(loaded, 0.95)
    lines = [
        "# Space latency: the Pair tab on long texts",
        "",
        (
            f"Machine: {cpu_name()}, {os.cpu_count()} CPUs seen by the process; torch {__import__('torch').__version__}; "
            f"{time.strftime('%Y-%m-%d')}; load average (1, 5, 15 min) "
            f"{' / '.join(f'{x:.1f}' for x in load)} at the start, {' / '.join(f'{x:.1f}' for x in end)} at the end "
            "(other work on the machine counts in these numbers)."
        ),
        (
            f"`python benchmarks/space_latency.py --requests {args.requests} --concurrency {args.concurrency} "
            f"--runs {args.runs}`: seconds from the request to the whole answer (scores, explanation, heatmap PNG), "
            "through gradio_client."
        ),
        "",
        f"First request (loads the model): {first:.2f} s.",
        "",
        (
            f"**3,990-character pair, {args.requests} requests from {args.concurrency} users at once: "
            f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {max(loaded):.2f} s**."
        ),
        "",
        "Each case alone:",
        "",
        f"| case | median of {args.runs} (s) | slowest (s) |",
        "|---|---|---|",
        *rows,
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
