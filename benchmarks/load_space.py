"""Load test of the Space: start app.py on 127.0.0.1 and drive it with concurrent gradio_client users.

    python benchmarks/load_space.py                       # 20 users x 50 requests, writes benchmarks/load_results.md
    python benchmarks/load_space.py --users 20 --requests 500   # 10,000 requests: RSS at 1k, 5k and 10k
    python benchmarks/load_space.py --hostile --requests 40 --hostile-requests 200   # load_hostile_results.md

Plain: each answer checked against the engine (docs/reliability.md). ``--hostile``: two Pair users alone, then
beside a third looping over the worst requests the Space refuses or bounds by work (docs/space.md).
"""

import argparse
import csv
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import common
from common import rss_mb
from gradio_client import Client, handle_file

import fastbertscore as fb

#: Hostile requests answered within this many seconds are counted.
WITHIN_S = 2.0
UPLOAD_MB = 50
#: Seconds a hostile request may take before it is reported as still running: a request stops at the Space's
#: deadline, and a request at the work budget may wait that long for the one before it.
REQUEST_TIMEOUT_S = 3 * 120
#: The hostile user stops after this many seconds, done or not.
HOSTILE_SECONDS = 900
#: Languages the hostile user asks for, a new one each time (known codes: each is a baseline lookup once).
LANGUAGES = "af sq ar an hy ast az ba eu bar be bn bpy bs br bg my ca ceb ce cv hr cs da nl et fi fr gl ka de el"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--requests", type=int, help="per user (default: 50; with --hostile, 40)")
    parser.add_argument("--batch-every", type=int, default=5, help="every n-th request of a user is a 5-pair file")
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/load_results.md (hostile: …)")
    parser.add_argument("--hostile", action="store_true", help="two Pair users beside a hostile one")
    parser.add_argument("--hostile-requests", type=int, default=200, help="with --hostile: the hostile user's")
    args = parser.parse_args(argv)
    args.requests = args.requests or (40 if args.hostile else 50)
    args.out = args.out or common.HERE / ("load_hostile_results.md" if args.hostile else "load_results.md")
    data = list(dict.fromkeys((r["candidate"], r["reference"]) for r in common.rows()))[:400]
    tmp = Path(tempfile.mkdtemp(prefix="load-space-"))
    app, url = start_app()
    try:
        report = (run_hostile if args.hostile else run)(args, app, url, data, tmp)
    finally:
        app.terminate()
        app.wait(timeout=30)
    common.write(report, args.out)


def start_app() -> tuple[subprocess.Popen, str]:
    """app.py on a free port of 127.0.0.1, once it takes connections: its process and its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gradio = {"GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": {**os.environ, **common.ENV, **gradio}}
    app = subprocess.Popen([sys.executable, str(common.ROOT / "app.py")], cwd=common.ROOT, **quiet)
    deadline = time.time() + 120
    while time.time() < deadline and app.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return app, f"http://127.0.0.1:{port}/"
        except OSError:
            time.sleep(0.3)
    code = app.poll()
    app.kill()
    raise RuntimeError("app.py did not start within 120 s" if code is None else f"app.py exited with code {code}")


def write_pairs(path: Path, rows) -> Path:
    """A Batch file: the header candidate, reference and ``rows``."""
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["candidate", "reference"], *rows])
    return path


def score_file(client, path: Path, keep: bool = True):
    """The Batch tab's request for the file at ``path`` (columns candidate, reference), default model."""
    options = (fb.DEFAULT_MODEL, "", "en", False, keep)  # model, layer, lang, idf, do_rescale
    return client.predict(handle_file(str(path)), "candidate", "reference", *options, api_name="/score_file")


def refusals(client, tmp: Path) -> list[list]:
    """Oversized input on the cold app: what each gets, and how fast (a refusal arrives as an AppError)."""
    big = write_pairs(tmp / "too_many.csv", ([f"c {i}", f"r {i}"] for i in range(2001)))
    calls = {
        "text of 4,001 characters": lambda: client.predict("x" * 4001, "a reference", api_name="/score"),
        "reference of 10,000 characters": lambda: client.predict("a candidate", "y" * 10_000, api_name="/score"),
        "file of 2,001 rows": lambda: score_file(client, big, keep=False),
    }
    done = {what: attempt(call) for what, call in calls.items()}
    return [[what, f"{s:.3f}", "ACCEPTED (wrong)" if m is None else m[:110]] for what, (s, m) in done.items()]


def expected_scores(data: list[tuple[str, str]]) -> tuple[dict, list[str]]:
    """The engine's F here for each pair (k, False) and with a second reference (k, True); the second references."""
    scorer, cands, refs = fb.BERTScorer(model_type=fb.DEFAULT_MODEL), [c for c, _ in data], [r for _, r in data]
    others = refs[1:] + refs[:1]
    F, F_other = (scorer.score(cands, r)[2].tolist() for r in (refs, others))
    return {(k, two): max(f, F_other[k]) if two else f for k, f in enumerate(F) for two in (False, True)}, others


def run(args, app, url, data, tmp) -> str:
    client = Client(url, verbose=False)
    rss = {"cold": rss_mb(app.pid)}
    refused = refusals(client, tmp)  # 1. refusals on a cold app
    rss["after the refusals"] = rss_mb(app.pid)
    expected, others = expected_scores(data)  # 2. warm-up, and the expected scores computed here with the engine
    files = [write_pairs(tmp / f"batch_{k}.csv", data[k : k + 5]) for k in range(0, len(data) - 5, 5)]
    client.predict(*data[0], api_name="/score")
    score_file(client, files[0])
    rss["after warm-up"] = rss_mb(app.pid)
    wrong, samples, total = [], [], args.users * args.requests  # samples: (requests done, app RSS MB) per tenth

    def send(me, u: int, i: int) -> str:  # 3. load
        k, two = (u * args.requests + i) % len(data), bool(i % 2)
        if i % args.batch_every == args.batch_every - 1:
            score_file(me, files[k % len(files)])
            return "5-pair file"
        c, r = data[k]
        f1 = me.predict(c, f"{r}\n{others[k]}" if two else r, api_name="/score")["f1"]
        if abs(f1 - expected[(k, two)]) > 1e-5:
            wrong.append((c, r, f1, expected[(k, two)]))
        return "two refs" if two else "pair"

    sample = lambda done: samples.append((done, rss_mb(app.pid))) if done % max(1, total // 10) == 0 else None
    start = time.perf_counter()
    latencies, failures = drive(url, args.users, args.requests, send, sample)
    elapsed = time.perf_counter() - start
    rss["at the end"] = end = rss_mb(app.pid)
    growth = "No RSS samples (fewer than 10 requests)."
    if samples:
        growth = f"Growth from the first tenth of the load to the end: **{end - samples[0][1]:+.0f} MB** "
        growth += f"({samples[0][0]} → {total} requests)."
    kinds = [[k, *latency(v), f"{max(v):.3f}"] for k in ("pair", "two refs", "5-pair file") if (v := latencies.get(k))]
    memory = " · ".join(f"{when} {mb:.0f} MB" for when, mb in rss.items())
    return f"""# Space load test

`python benchmarks/load_space.py --users {args.users} --requests {args.requests}` on {common.machine()}; app.py \
with queue concurrency 2, default model.

- Requests: {total} from {args.users} concurrent gradio_client users in {elapsed:.0f} s ({total / elapsed:.1f} \
requests/s); **failed: {len(failures)}**; answers differing from the engine (> 1e-5): {len(wrong)}.
- App RSS: {memory}; during the load (requests done: MB): {", ".join(f"{n}: {mb:.0f}" for n, mb in samples)}.
- {growth}

{common.table(["request", "n:", "p50 s:", "p95 s:", "max s:"], kinds)}
Oversized input on the cold app (before any model load):

{common.table(["input", "s:", "answer"], refused)}
{failed("Failures:", failures)}"""


def distinct_words(k: int, n: int) -> str:
    """``n`` distinct-looking words, the same for the same ``k``."""
    return " ".join(f"w{(k * 7919 + i * 104729) % 1_000_003}" for i in range(n))


def uploads(tmp: Path) -> dict[str, Path]:
    """The uploads of the mix, written once (at_budget: distinct texts whose work is just under the budget)."""
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
    path, n = tmp / "at_budget.csv", 4
    for _ in range(3):  # the work grows with the words per text: two corrections land within a few percent
        rows = (f"{distinct_words(2 * r, n)},{distinct_words(2 * r + 1, n)}" for r in range(2000))
        path.write_text("\n".join(["candidate,reference", *rows]) + "\n", encoding="utf-8")
        job = fb.space.score_file(str(path), "candidate", "reference", run=lambda job: job)  # checked, not run
        n = max(1, int(n * 0.97 * fb.space.WORK_BUDGET / job.work))
    return {name.split(".")[0]: tmp / name for name in texts} | {"at_budget": path}


def hostile_requests(url: str, tmp: Path) -> list[tuple[str, object]]:
    """(what, call) for the worst requests of the Space's limits, each a call that raises when refused."""
    import httpx

    client, files = Client(url, verbose=False), uploads(tmp)
    systems = [files[f"system{k}"] for k in range(fb.space.MAX_SYSTEMS + 1)]
    models = (fb.DEFAULT_MODEL, "roberta-large")  # a model with a published baseline: allowed, loaded only if cached

    call = lambda api, *args: lambda: client.submit(*args, api_name=api).result(timeout=REQUEST_TIMEOUT_S)
    batch = lambda name, refs="reference": call("/score_file", handle_file(str(files[name])), "candidate", refs)

    def in_turn(*options, choices: tuple):  # a Pair request with the next of ``choices`` each time
        turn = itertools.cycle(choices[1:] + choices[:1])
        return lambda: call("/score", "a", "b", *options, next(turn))()

    def upload(name: str, data: bytes, timeout: float = 60) -> dict:
        answer = httpx.post(url + "gradio_api/upload", files={"files": (name, data)}, timeout=timeout)
        if answer.status_code != 200:
            raise RuntimeError(f"HTTP {answer.status_code}: {answer.text[:80]}")
        return {"path": answer.json()[0], "orig_name": name, "meta": {"_type": "gradio.FileData"}}

    # uploaded once: later requests name the server's copy, so they time the refusal alone
    on_server, local = [upload(s.name, s.read_bytes()) for s in systems], [handle_file(str(s)) for s in systems]
    big = b"candidate,reference\n" + b"x" * (UPLOAD_MB * 1_000_000)
    pasted = "=== a\nx\ny\n=== b\nx\ny\n"
    return [
        (f"a file at the work budget ({fb.space.WORK_BUDGET:,} tokens)", batch("at_budget")),
        ("10,000 distinct long texts (over the work budget)", batch("over_budget", "r1,r2,r3,r4")),
        ("layers 1 and 2 in turn", in_turn(fb.DEFAULT_MODEL, choices=("1", "2"))),
        (" and ".join(models) + " in turn", in_turn(choices=models)),
        ("a new language each time", in_turn(fb.DEFAULT_MODEL, "", choices=LANGUAGES.split())),
        ("1,000,000 tiny rows", batch("million_rows")),
        ("a JSONL line of 200,000 '['", batch("nested")),
        ("n_samples=100,000,000", call("/compare", None, "x\ny", None, pasted, "paired bootstrap", 100_000_000, 1)),
        ("5,000 reference columns", batch("small", "reference," * 5000)),
        ("JSONL cell of 1,000,000 references", batch("huge_cell")),
        ("2,000 rows x 8 references", batch("wide", ",".join(f"r{k}" for k in range(8)))),
        (f"{len(systems)} system files, uploaded with the request", call("/compare", None, "a\nb", local, "")),
        (f"{len(systems)} system files, uploaded before", call("/compare", None, "a\nb", on_server, "")),
        ("model off the list", call("/score", "a", "b", "someone/any-model")),
        ("layer 999", call("/score", "a", "b", fb.DEFAULT_MODEL, "999")),
        (f"{UPLOAD_MB} MB upload", lambda: upload("big.csv", big, timeout=REQUEST_TIMEOUT_S)),
    ]


def pair_users(url, data, requests: int) -> tuple[list[float], list[str]]:
    """Two clients sending ``requests`` Pair requests each: the latencies and the failures."""

    def send(client, u: int, i: int) -> str:
        client.submit(*data[(u * requests + i) % len(data)], api_name="/score_pair").result(timeout=REQUEST_TIMEOUT_S)
        return "pair"

    latencies, failures = drive(url, 2, requests, send)
    return latencies.get("pair", []), failures


def run_hostile(args, app, url, data, tmp) -> str:
    Client(url, verbose=False).predict(*data[0], api_name="/score_pair")  # warm-up: loads the model
    quiet, quiet_failures = pair_users(url, data, args.requests)
    calls = hostile_requests(url, tmp)
    for _, call in calls:  # one round before measuring: the app's first answers allocate what they keep
        attempt(call)
    rss_before = rss_mb(app.pid)
    outcomes, deadline = [], time.time() + HOSTILE_SECONDS  # outcomes: (what, seconds, outcome)

    def hostile() -> None:
        for k in itertools.takewhile(lambda _: time.time() <= deadline, range(args.hostile_requests)):
            what, call = calls[k % len(calls)]
            seconds, message = attempt(call)
            kind = "stopped at its deadline" if (message or "").startswith("This request was stopped") else "refused"
            outcomes.append((what, seconds, "finished" if message is None else f"{kind}: {message[:100]}"))

    with ThreadPoolExecutor(1) as pool:
        attacker = pool.submit(hostile)
        loud, loud_failures = pair_users(url, data, args.requests)
        attacker.result()
    return hostile_report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_mb(app.pid))


def p95(values: list[float]) -> float:
    return sorted(values)[round(0.95 * (len(values) - 1))]


def attempt(call) -> tuple[float, str | None]:
    """Seconds ``call()`` took, and the first line of the error it raised (None if it answered)."""
    start = time.perf_counter()
    try:
        call()
        return time.perf_counter() - start, None
    except Exception as error:  # noqa: BLE001 - a refusal is an answer here
        return time.perf_counter() - start, (str(error).strip() or type(error).__name__).splitlines()[0]


def drive(url: str, users: int, requests: int, send, done=lambda n: None) -> tuple[dict[str, list], list[str]]:
    """``users`` clients of the app at ``url`` at once, each sending ``requests`` requests by ``send(client, user, i)``
    (which returns the request's kind; then ``done(requests answered)``): the latencies by kind, and the failures."""
    latencies, failures, lock = {}, [], threading.Lock()  # latencies by kind; "user u request i: error"

    def user(u: int) -> None:
        me = Client(url, verbose=False)
        for i in range(requests):
            start = time.perf_counter()
            try:
                kind = send(me, u, i)
            except Exception as error:  # noqa: BLE001 - counted and reported
                with lock:
                    failures.append(f"user {u} request {i}: {type(error).__name__}: {error}"[:200])
                continue
            with lock:
                latencies.setdefault(kind, []).append(time.perf_counter() - start)
                done(sum(map(len, latencies.values())))

    with ThreadPoolExecutor(users) as pool:
        list(pool.map(user, range(users)))
    return latencies, failures


def latency(values: list[float]) -> list:
    """A table's cells for these latencies: their count, p50 and p95."""
    return [len(values), *(f"{q(values):.3f}" if values else "–" for q in (statistics.median, p95))]


def failed(title: str, failures: list[str]) -> str:
    """A report's list of the first 20 failures under ``title`` (nothing where none failed)."""
    return f"{title}\n\n" + "".join(f"- {f}\n" for f in failures[:20]) if failures else ""


def hostile_report(args, quiet, quiet_failures, loud, loud_failures, outcomes, rss_before, rss_after) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    ratio = p95(loud) / p95(quiet) if quiet and loud else float("nan")
    count = lambda start, within=float("inf"): sum(o.startswith(start) and t <= within for _, t, o in outcomes)
    slowest = max([t for _, t, o in outcomes if o == "finished"], default=0.0)
    users = [["alone", *latency(quiet), len(quiet_failures)]]
    users += [["beside the hostile user", *latency(loud), len(loud_failures)]]
    hostile = []
    for what in dict.fromkeys(w for w, _, _ in outcomes):
        times = [s for w, s, _ in outcomes if w == what]
        answers = " / ".join(a.replace("|", "/") for a in sorted({o for w, _, o in outcomes if w == what}))
        hostile.append([what, len(times), f"{max(times):.3f}", f"{statistics.median(times):.3f}", answers])
    named = (("Failures (alone):", quiet_failures), ("Failures (beside the hostile user):", loud_failures))
    failures = "\n".join(failed(title, failures) for title, failures in named if failures)
    text = f"""# Space under hostile load

`python benchmarks/load_space.py --hostile --requests {args.requests} --hostile-requests {args.hostile_requests}` \
on {common.machine()}; load average at the end {load}. app.py on 127.0.0.1, default model.

{common.table(["two users' Pair requests", "n:", "p50 s:", "p95 s:", "failed:"], users)}
- p95 beside the hostile user / alone: **{ratio:.2f}×**.
- App RSS before the hostile requests {rss_before:.0f} MB, after {len(outcomes)}: {rss_after:.0f} MB \
(**{rss_after - rss_before:+.0f} MB**).
- Hostile requests refused within {WITHIN_S:g} s: **{count("refused", WITHIN_S)} of {count("refused")}**; stopped \
at their deadline: **{count("stopped")}**; accepted and finished: **{count("finished")}** (the slowest {slowest:.1f} s).

{common.table(["hostile request", "n:", "max s:", "median s:", "outcome"], hostile)}
{failures}"""
    return text.rstrip("\n") + "\n"


if __name__ == "__main__":
    main()
