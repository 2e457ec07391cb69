"""The hostile mix of ``benchmarks/load_space.py --hostile``: two users send Pair requests, alone and then while a
third loops over the worst requests the Space refuses or bounds by work (on 127.0.0.1, bounded in count and time).

    python benchmarks/load_space.py --hostile --requests 10 --hostile-requests 30

Reports the users' p50/p95 and failures in each run, each hostile request's time and outcome, and the app's RSS
before and after the hostile requests. The requests and the figures: docs/space.md, "Under hostile load".
"""

from __future__ import annotations

import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import common
from common import percentile, rss_mb
from gradio_client import Client, handle_file

import fastbertscore as fb

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
    return report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after)


def users_row(name: str, values: list[float], failures: list[str]) -> list:
    if not values:
        return [name, 0, "–", "–", len(failures)]
    return [name, len(values), f"{statistics.median(values):.3f}", f"{percentile(values, 0.95):.3f}", len(failures)]


def report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    ratio = percentile(loud, 0.95) / percentile(quiet, 0.95) if quiet and loud else float("nan")
    refused = sum(o.startswith("refused") for _, _, o in outcomes)
    refused_fast = sum(o.startswith("refused") and t <= WITHIN_S for _, t, o in outcomes)
    stopped = sum(o.startswith("stopped") for _, _, o in outcomes)
    finished = sum(o == "finished" for _, _, o in outcomes)
    slowest_finished = max([t for _, t, o in outcomes if o == "finished"], default=0.0)
    users = [users_row("alone", quiet, quiet_failures), users_row("beside the hostile user", loud, loud_failures)]
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
