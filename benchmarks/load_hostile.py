"""The hostile mix of ``benchmarks/load_space.py --hostile``: two users send Pair requests while a third loops
over the worst requests the Space refuses or bounds (on 127.0.0.1 only, bounded in count and time).

    python benchmarks/load_space.py --hostile                  # 2 × 40 Pair requests, 200 hostile requests
    python benchmarks/load_space.py --hostile --requests 10 --hostile-requests 30

Two runs on the same app: first the two users alone, then the two users again beside the hostile one. Reports
the users' p50/p95 and failures in each run, every hostile request's time and outcome (refused within
2 s, or stopped at its deadline; a request the Space accepts, such as a file just under the work budget, may run
to its end), and the app's RSS before and after the hostile requests .

Beside the count limits, the mix has requests bounded by work: a file just under the work budget (accepted: it
runs until done or its deadline, and the users' pairs run between its encoder batches), the issue's file of
10,000 distinct long texts (over the budget), layers 1 and 2 in turn and two models in turn (each a load until
layers share weights), a new language each time, and parse-heavy uploads (a million tiny rows, 200,000 '[').
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from load_space import cpu_name, percentile, rss_mb

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


def hostile_requests(url: str, tmp: Path, Client, handle_file, fb) -> list[tuple[str, object]]:
    """(what, call) for the worst requests of the Space's limits, each a call that raises when refused."""
    import httpx

    client = Client(url, verbose=False)
    small = tmp / "small.csv"
    small.write_text("candidate,reference\nThe cat sat.,A cat sat.\n", encoding="utf-8")
    huge_cell = tmp / "huge_cell.jsonl"
    huge_cell.write_text(json.dumps({"candidate": "a", "reference": ["b"] * 1_000_000}) + "\n", encoding="utf-8")
    wide = tmp / "wide.csv"
    wide.write_text(
        "candidate," + ",".join(f"r{k}" for k in range(8)) + "\n" + ("a" + ",b" * 8 + "\n") * 2000, encoding="utf-8"
    )
    systems = []
    for k in range(fb.space.MAX_SYSTEMS + 1):
        systems.append(tmp / f"system{k}.txt")
        systems[-1].write_text("a\nb\n", encoding="utf-8")
    pasted = "=== a\nx\ny\n=== b\nx\ny\n"
    upload = b"candidate,reference\n" + b"x" * (UPLOAD_MB * 1_000_000)

    def predict(*args, api_name):
        return client.submit(*args, api_name=api_name).result(timeout=REQUEST_TIMEOUT_S)

    def uploaded(path: Path) -> dict:
        """``path`` uploaded once: later requests name the server's copy, so they time the refusal alone."""
        answer = httpx.post(url + "gradio_api/upload", files={"files": (path.name, path.read_bytes())}, timeout=60)
        return {"path": answer.json()[0], "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}

    on_server = [uploaded(s) for s in systems]

    def upload_50_mb():
        answer = httpx.post(url + "gradio_api/upload", files={"files": ("big.csv", upload)}, timeout=REQUEST_TIMEOUT_S)
        if answer.status_code != 200:
            raise RuntimeError(f"HTTP {answer.status_code}: {answer.text[:80]}")
        return answer.text

    return [
        *_work_requests(client, predict, tmp, handle_file, fb),
        (
            "n_samples=100,000,000",
            lambda: predict(None, "x\ny", None, pasted, "paired bootstrap", 100_000_000, 1, api_name="/compare"),
        ),
        (
            "5,000 reference columns",
            lambda: predict(handle_file(str(small)), "candidate", "reference," * 5000, api_name="/score_file"),
        ),
        (
            "JSONL cell of 1,000,000 references",
            lambda: predict(handle_file(str(huge_cell)), "candidate", "reference", api_name="/score_file"),
        ),
        (
            "2,000 rows x 8 references",
            lambda: predict(
                handle_file(str(wide)), "candidate", ",".join(f"r{k}" for k in range(8)), api_name="/score_file"
            ),
        ),
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
        (f"{UPLOAD_MB} MB upload", upload_50_mb),
    ]


def _words(k: int, n: int) -> str:
    """``n`` distinct-looking words, the same for the same ``k``."""
    return " ".join(f"w{(k * 7919 + i * 104729) % 1_000_003}" for i in range(n))


def _at_budget(tmp: Path, fb) -> Path:
    """A Batch file of 2,000 rows of distinct texts whose counted work is just under the Space's budget."""
    path, words = tmp / "at_budget.csv", 4
    for _ in range(3):  # the work grows with the words per text: two corrections land within a few percent
        rows = ["candidate,reference", *(f"{_words(2 * r, words)},{_words(2 * r + 1, words)}" for r in range(2000))]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        job = fb.space.score_file(str(path), "candidate", "reference", run=lambda job: job)  # checked, not run
        work = job.work
        words = max(1, int(words * 0.97 * fb.space.WORK_BUDGET / work))
    return path


def _work_requests(client, predict, tmp: Path, handle_file, fb) -> list[tuple[str, object]]:
    """The requests bounded by work rather than by count, and the parse-heavy uploads."""
    at_budget = _at_budget(tmp, fb)
    over = tmp / "over_budget.csv"  # the issue's: 2,000 rows × (1 + 4) distinct long texts, under 10 MB
    over.write_text(
        "candidate,r1,r2,r3,r4\n"
        + "".join(",".join(_words(5 * r + k, 60) for k in range(5)) + "\n" for r in range(2000)),
        encoding="utf-8",
    )
    million = tmp / "million_rows.csv"
    million.write_text("candidate,reference\n" + "a,b\n" * 1_000_000, encoding="utf-8")
    nested = tmp / "nested.jsonl"
    nested.write_text('{"candidate": "a", "reference": "b"}\n' + "[" * 200_000 + "\n", encoding="utf-8")
    turns = {"layer": 0, "model": 0, "lang": 0}

    def next_turn(what: str) -> int:
        turns[what] += 1
        return turns[what]

    other_model = "roberta-large"  # a model with a published baseline: allowed, and loaded only if cached
    return [
        (
            f"a file at the work budget ({fb.space.WORK_BUDGET:,} tokens)",
            lambda: predict(handle_file(str(at_budget)), "candidate", "reference", api_name="/score_file"),
        ),
        (
            "10,000 distinct long texts (over the work budget)",
            lambda: predict(handle_file(str(over)), "candidate", "r1,r2,r3,r4", api_name="/score_file"),
        ),
        (
            "layers 1 and 2 in turn",
            lambda: predict("a", "b", fb.DEFAULT_MODEL, str(1 + next_turn("layer") % 2), api_name="/score"),
        ),
        (
            f"{fb.DEFAULT_MODEL} and {other_model} in turn",
            lambda: predict("a", "b", (fb.DEFAULT_MODEL, other_model)[next_turn("model") % 2], api_name="/score"),
        ),
        (
            "a new language each time",
            lambda: predict(
                "a", "b", fb.DEFAULT_MODEL, "", LANGUAGES[next_turn("lang") % len(LANGUAGES)], api_name="/score"
            ),
        ),
        (
            "1,000,000 tiny rows",
            lambda: predict(handle_file(str(million)), "candidate", "reference", api_name="/score_file"),
        ),
        (
            "a JSONL line of 200,000 '['",
            lambda: predict(handle_file(str(nested)), "candidate", "reference", api_name="/score_file"),
        ),
    ]


def _pair_users(url, Client, data, requests: int, users: int = 2):
    """``users`` clients sending ``requests`` Pair requests each; returns (latencies, failures)."""
    latencies, failures, lock = [], [], threading.Lock()

    def user(u: int) -> None:
        me = Client(url, verbose=False)
        for i in range(requests):
            c, r = data[(u * requests + i) % len(data)]
            start = time.perf_counter()
            try:
                me.submit(c, r, api_name="/score_pair").result(timeout=REQUEST_TIMEOUT_S)
            except Exception as error:  # noqa: BLE001 - counted and reported
                with lock:
                    failures.append(f"user {u} request {i}: {type(error).__name__}: {error}"[:160])
                continue
            with lock:
                latencies.append(time.perf_counter() - start)

    with ThreadPoolExecutor(users) as pool:
        list(pool.map(user, range(users)))
    return latencies, failures


def run_hostile(args, app, url, data, tmp, Client, handle_file, fb) -> str:
    client = Client(url, verbose=False)
    client.predict(*data[0], api_name="/score_pair")  # warm-up: loads the model
    quiet, quiet_failures = _pair_users(url, Client, data, args.requests)
    calls = hostile_requests(url, tmp, Client, handle_file, fb)
    for _, call in calls:  # one round before measuring: the app's first answers allocate what they keep
        try:
            call()
        except Exception:  # noqa: BLE001, S110 - refusals expected
            pass
    rss_before = rss_mb(app.pid)
    outcomes: list[tuple[str, float, str]] = []
    deadline = time.time() + args.max_seconds

    def hostile() -> None:
        for k in range(args.hostile_requests):
            if time.time() > deadline:
                break
            what, call = calls[k % len(calls)]
            start = time.perf_counter()
            try:
                call()
                outcome = "finished"
            except Exception as error:  # noqa: BLE001 - a refusal is the expected outcome
                message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                kind = "stopped at its deadline" if message.startswith("This request was stopped") else "refused"
                outcome = f"{kind}: {message[:100]}"
            outcomes.append((what, time.perf_counter() - start, outcome))

    with ThreadPoolExecutor(1) as pool:
        attacker = pool.submit(hostile)
        loud, loud_failures = _pair_users(url, Client, data, args.requests)
        attacker.result()
    rss_after = rss_mb(app.pid)
    return _report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after)


def _row(name: str, values: list[float], failures: list[str]) -> str:
    if not values:
        return f"| {name} | 0 | – | – | {len(failures)} |"
    return (
        f"| {name} | {len(values)} | {statistics.median(values):.3f} | {percentile(values, 0.95):.3f} | "
        f"{len(failures)} |"
    )


def _report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    ratio = percentile(loud, 0.95) / percentile(quiet, 0.95) if quiet and loud else float("nan")
    refused = sum(o.startswith("refused") for _, _, o in outcomes)
    refused_fast = sum(o.startswith("refused") and t <= WITHIN_S for _, t, o in outcomes)
    stopped = sum(o.startswith("stopped") for _, _, o in outcomes)
    finished = sum(o == "finished" for _, _, o in outcomes)
    slowest_finished = max([t for _, t, o in outcomes if o == "finished"], default=0.0)
    lines = [
        "# Space under hostile load",
        "",
        (
            f"`python benchmarks/load_space.py --hostile --requests {args.requests} --hostile-requests "
            f"{args.hostile_requests}` on {cpu_name()} ({platform.machine()}), {os.cpu_count()} cores, "
            f"{time.strftime('%Y-%m-%d')}; load average at the end {load}. app.py on 127.0.0.1, default model."
        ),
        "",
        "| two users' Pair requests | n | p50 s | p95 s | failed |",
        "|---|---:|---:|---:|---:|",
        _row("alone", quiet, quiet_failures),
        _row("beside the hostile user", loud, loud_failures),
        "",
        f"- p95 beside the hostile user / alone: **{ratio:.2f}×**.",
        (
            f"- App RSS before the hostile requests {rss_before:.0f} MB, after {len(outcomes)}: {rss_after:.0f} MB "
            f"(**{rss_after - rss_before:+.0f} MB**)."
        ),
        (
            f"- Hostile requests refused within {WITHIN_S:g} s: **{refused_fast} of {refused}**; stopped at their "
            f"deadline: **{stopped}**; accepted and finished: **{finished}** (the slowest {slowest_finished:.1f} s)."
        ),
        "",
        "| hostile request | n | max s | median s | outcome |",
        "|---|---:|---:|---:|---|",
    ]
    for what in dict.fromkeys(w for w, _, _ in outcomes):
        times = [s for w, s, _ in outcomes if w == what]
        answers = sorted({o for w, _, o in outcomes if w == what})
        lines.append(
            f"| {what} | {len(times)} | {max(times):.3f} | {statistics.median(times):.3f} | "
            f"{' / '.join(a.replace('|', '/') for a in answers)} |"
        )
    for name, failures in (("alone", quiet_failures), ("beside the hostile user", loud_failures)):
        if failures:
            lines += ["", f"Failures ({name}):", ""] + [f"- {f}" for f in failures[:20]]
    return "\n".join(lines) + "\n"
