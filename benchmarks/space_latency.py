"""Latency of the Space's Pair tab on long texts (issue 32: a 4,000-character pair must answer in ≤ 3 s on a
2-core CPU). Starts app.py on 127.0.0.1 and calls its ``score_pair`` endpoint with gradio_client, as the Score
button does: scores, both explanations, the heatmap drawn and encoded as PNG, the answer sent back (the browser's
drawing is not counted).

    python benchmarks/space_latency.py                 # 5 runs per case, writes benchmarks/space_latency_results.md
    python benchmarks/space_latency.py --runs 10 --out /tmp/latency.md

The first request loads the model and is reported on its own; then each case runs ``--runs`` times.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
from pathlib import Path

from load_space import cpu_name, start_app

import fastbertscore as fb

HERE = Path(__file__).resolve().parent
LONG = ("The committee discussed the budget and the plans for next year. " * 62)[:3990]
OTHER = ("Members of the board argued about money, schools, roads and the new hospital until late at night. " * 41)[
    :4000
]
CASES = {
    "3,990-character candidate, 35-character reference (the issue's repro)": (
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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "space_latency_results.md")
    args = parser.parse_args(argv)
    from gradio_client import Client

    load = os.getloadavg()
    port = free_port()
    app = start_app(port)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        call = lambda c, r: client.predict(c, r, fb.DEFAULT_MODEL, "", "en", False, True, api_name="/score_pair")
        start = time.perf_counter()
        call(*CASES[next(iter(CASES))])
        first = time.perf_counter() - start
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
    lines = [
        "# Space latency: the Pair tab on long texts",
        "",
        f"Machine: {cpu_name()}, {os.cpu_count()} CPUs seen by the process; torch {__import__('torch').__version__}; "
        f"load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (other work on the machine).",
        f"`python benchmarks/space_latency.py --runs {args.runs}`: seconds from the request to the whole answer "
        "(scores, explanations, heatmap PNG), through gradio_client.",
        "",
        f"First request (loads the model): {first:.2f} s.",
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
