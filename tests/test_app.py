"""The Space: app.py served on 127.0.0.1, driven in headless Chromium (Playwright) and through gradio_client."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO
from servers import url_in_log, wait_until
from tolerances import assert_scores_close
from wmt import wmt_systems

import fastbertscore as fb

# Every test here needs the app server (about 8 s to start); the browser test also needs Chromium.
# One worker runs this module (pyproject: --dist loadgroup): one Space server and one browser for all of its tests.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("app")]
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


EXAMPLES = fb.space.EXAMPLES  # the page's first-run examples (importing them builds no page)
UNLOADABLE = "no-such-org/no-such-model"
CAND = "The president met the minister in Paris."
REF = "The president met the prime minister in Paris and signed a trade deal."


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    # No port is given: Gradio binds the first free one itself and prints it, and the URL is read back from there.
    # The Space serves the default and the baselines' models; this test's deployer adds one that cannot load.
    env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        fb.space.MODELS_VARIABLE: UNLOADABLE,
    }
    env.pop("GRADIO_SERVER_PORT", None)
    log = tmp_path_factory.mktemp("app") / "app.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-u", str(REPO / "app.py")], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        url = wait_until(lambda: url_in_log(log, r"http://127\.0\.0\.1:\d+"), server, 120, "app.py")
    except RuntimeError as error:
        pytest.fail(f"{error}: {log.read_text()[-2000:]}")
    yield url + "/"
    server.terminate()
    server.wait(timeout=20)


def test_score_endpoint_through_gradio_client(app_url):
    from gradio_client import Client

    client = Client(app_url, verbose=False)
    out = client.predict(CAND, REF, api_name="/score")
    (P, R, F), hashcode = fb.score([CAND], [REF], model_type=fb.DEFAULT_MODEL, return_hash=True)
    assert_scores_close([[out["precision"]], [out["recall"]], [out["f1"]]], (P, R, F))
    assert out["hashcode"] == hashcode
    layered = client.predict(CAND, REF, fb.DEFAULT_MODEL, "3", api_name="/score")
    assert "_L3_" in layered["hashcode"]


def test_oversized_input_is_refused_with_the_apps_message(app_url):
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="at most 4000"):
        Client(app_url, verbose=False).predict("word " * 1000, REF, api_name="/score")


@pytest.mark.parametrize("model", ["../../etc", "/etc", "tests", "baselines/../fastbertscore"])
def test_the_space_loads_hub_ids_only_never_paths(app_url, model):
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="is not a Hugging Face Hub model id"):
        Client(app_url, verbose=False).predict(CAND, REF, model, api_name="/score")


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (.ci/run installs it)")
def test_pair_and_batch_in_a_real_browser(page, tmp_path):
    data = tmp_path / "pairs.tsv"
    data.write_text(
        "candidate\treference\nThe cat sat on the mat.\tA cat was sitting on the mat.\nIt is raining.\tRain is falling.\n"
    )
    P, _, F = fb.score([CAND], [REF], model_type=fb.DEFAULT_MODEL)
    rescaled_hash = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True).hash
    batch_F = fb.score(
        ["The cat sat on the mat.", "It is raining."],
        ["A cat was sitting on the mat.", "Rain is falling."],
        model_type=fb.DEFAULT_MODEL,
    )[2]
    page.locator("#candidate textarea").fill(CAND)
    page.locator("#references textarea").fill(REF)
    page.locator("#score-button").click()
    page.wait_for_function(
        "document.querySelector('#hashcode textarea')?.value.includes('fastbertscore')", timeout=90_000
    )
    assert page.locator("#hashcode textarea").input_value() == rescaled_hash  # the Space rescales by default
    scores = page.locator("#scores").inner_text()
    assert str(round(float(F[0]), 6)) in scores and str(round(float(P[0]), 6)) in scores
    page.get_by_text("MISSING").first.wait_for(timeout=10_000)
    page.screenshot(path=str(tmp_path / "pair.png"), full_page=True)

    # First run: the model box shows its whole default id, and an example with two references says which counted.
    model_box = page.locator("#model input, #model textarea").first
    assert model_box.input_value() == fb.DEFAULT_MODEL
    assert model_box.evaluate("e => e.scrollWidth <= e.clientWidth"), "the default model id is cut off"
    page.locator("#examples").get_by_text(EXAMPLES[1][0]).first.click()
    page.wait_for_function(
        "t => document.querySelector('#references textarea')?.value === t", arg=EXAMPLES[1][1], timeout=10_000
    )
    page.locator("#score-button").click()
    page.wait_for_function("document.querySelector('#counted')?.innerText.includes('of 2')", timeout=90_000)
    result = fb.BERTScorer(model_type=fb.DEFAULT_MODEL).score_result([EXAMPLES[1][0]], [EXAMPLES[1][1].splitlines()])
    best = [int(x[0]) + 1 for x in result.best_reference]
    counted = page.locator("#counted").inner_text()
    if len(set(best)) == 1:
        assert f"Reference {best[0]} of 2" in counted
    else:
        assert all(f"{name}: reference {b}" in counted for name, b in zip(("P", "R", "F1"), best, strict=True))
    assert str(round(float(result.raw[2][0]), 6)) in page.locator("#scores").inner_text()
    page.screenshot(path=str(tmp_path / "example.png"), full_page=True)

    _batch(page, data)
    page.wait_for_function("document.querySelector('#summary')?.innerText.includes('2 pairs')", timeout=90_000)
    table = page.locator("#results").inner_text()
    assert "It is raining." in table and str(round(float(batch_F[1]), 6)) in table
    page.screenshot(path=str(tmp_path / "batch.png"), full_page=True)
    assert (tmp_path / "pair.png").stat().st_size > 10_000 and (tmp_path / "batch.png").stat().st_size > 10_000
    if os.environ.get("FASTBERTSCORE_SCREENSHOTS"):
        for name in ("pair.png", "example.png", "batch.png"):
            shutil.copy(tmp_path / name, Path(os.environ["FASTBERTSCORE_SCREENSHOTS"]) / name)


def _upload(page, box: str, paths: list[Path]) -> None:
    """Set ``paths`` on the upload box ``box`` and wait until the last one is listed. The box draws its file input a
    while after its tab opens (over 30 s, Playwright's default wait, on a loaded machine). A file it holds is listed as
    its stem and its extension, two spans of one cell of its file table (Gradio's FilePreview), so the listing is
    found by the stem; the whole name shows only while it uploads, which a loaded machine can miss."""
    file_input = page.locator(f"#{box} input[type=file]")
    file_input.wait_for(state="attached", timeout=120_000)
    file_input.set_input_files([str(path) for path in paths])
    page.locator(f"#{box} .file-preview td").filter(has_text=paths[-1].stem).first.wait_for(timeout=120_000)


def _compare_uploads(page, refs_file: Path, files: list[Path]):
    """Open the Compare tab and upload the references and the systems."""
    page.get_by_role("tab", name="Compare systems").click()
    _upload(page, "compare-refs", [refs_file])
    _upload(page, "compare-systems", files)


def _system_files(folder: Path, n_systems: int = 3):
    """Real WMT21 is-en outputs of ``n_systems`` systems and their references (tests/data), as .txt files."""
    outputs, refs = wmt_systems(n_systems=n_systems)
    files = []
    for name, lines in outputs.items():
        files.append(folder / f"{name}.txt")
        files[-1].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    (folder / "refs.txt").write_text("".join(x + "\n" for x in refs), encoding="utf-8")
    return files, folder / "refs.txt", outputs, refs


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (.ci/run installs it)")
def test_compare_systems_tab_in_a_real_browser(page, tmp_path):
    files, refs_file, outputs, refs = _system_files(tmp_path)
    # The Space rescales by default (language en); the table must equal compare() with the same settings.
    expected = fb.compare(
        {f.name: outputs[f.stem] for f in files},
        refs,
        model_type=fb.DEFAULT_MODEL,
        lang="en",
        rescale_with_baseline=True,
    )
    _compare_uploads(page, refs_file, files)
    page.locator("#compare-button").click()
    page.wait_for_function(
        "document.querySelector('#compare-summary')?.innerText.includes('3 systems')", timeout=120_000
    )
    table = page.locator("#compare-table").inner_text()
    for k, s in enumerate(expected.systems):
        assert s.name in table
        assert f"{s.scores[2]:.4f}".rstrip("0") in table and f"{s.intervals[2].half_width:.4f}".rstrip("0") in table
        if k:
            assert f"{s.p_value:.4f}" in table
    assert expected.signature in page.locator("#compare-summary").inner_text()
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
    assert (tmp_path / "compare.png").stat().st_size > 10_000
    if os.environ.get("FASTBERTSCORE_SCREENSHOTS"):
        shutil.copy(tmp_path / "compare.png", Path(os.environ["FASTBERTSCORE_SCREENSHOTS"]) / "compare.png")


def test_compare_endpoint_refuses_a_system_of_the_wrong_length(app_url, tmp_path):
    from gradio_client import Client, handle_file
    from gradio_client.exceptions import AppError

    files, refs_file, _, _ = _system_files(tmp_path, 2)
    files[1].write_text("only one line\n", encoding="utf-8")
    with pytest.raises(AppError, match=f"System {files[1].name} has 1 lines but the references have"):
        Client(app_url, verbose=False).predict(
            handle_file(str(refs_file)),
            "",
            [handle_file(str(f)) for f in files],
            "",
            "paired bootstrap",
            None,
            12345,
            fb.DEFAULT_MODEL,
            "",
            "en",
            False,
            True,
            "float32",
            api_name="/compare",
        )


# The Space as people meet it. Each test drives the page as a person would and checks what they see.
LONG_CANDIDATE = ("The committee discussed the budget and the plans for next year. " * 62)[:3990]
SHORT_REFERENCE = "The committee discussed the budget."


def browser_test(test):
    """The marks every test below carries: a browser test, skipped where Debian's Chromium is missing."""
    test = pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (.ci/run installs it)"
    )(test)
    return pytest.mark.browser(test)


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module's browser tests (each gets its own context: no cookie, storage or page is
    shared between them)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(app_url, browser):
    """A fresh page of the Space in a context of its own, as a person opening it."""
    context = browser.new_context(viewport={"width": 1280, "height": 1600})
    page = context.new_page()
    page.goto(app_url, wait_until="networkidle")
    yield page
    context.close()


def _score_pair(page, candidate: str, reference: str):
    page.locator("#candidate textarea").fill(candidate)
    page.locator("#references textarea").fill(reference)
    page.locator("#score-button").click()


def _tables_wider_than_their_box(page) -> list:
    """Every visible table (Gradio draws a header <table> and a body grid) wider than the block holding it, or
    whose block scrolls sideways, as [block id, widest part, box width]."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.block')).filter(b => b.offsetParent)
        .filter(b => b.querySelector('table, [role=grid]'))
        .map(b => [b.id, Math.max(b.scrollWidth, ...Array.from(b.querySelectorAll('table, [role=grid], [role=row]'))
                                   .map(t => t.getBoundingClientRect().width)), b.clientWidth])
        .filter(([id, widest, box]) => widest > box + 1)""")


def _batch(page, path: Path, ref_columns: str = "reference"):
    page.get_by_role("tab", name="Batch").click()
    _upload(page, "upload", [path])
    page.get_by_label("Reference column(s), comma-separated").fill(ref_columns)
    page.locator("#score-file").click()


@browser_test
def test_a_3990_character_candidate_renders_its_heatmap(page):
    # The figure was 860 × 23,130 pixels, past WebP's limit, and every output showed a bare "Error" badge.
    _score_pair(page, LONG_CANDIDATE, SHORT_REFERENCE)
    page.wait_for_function("document.querySelector('#heatmap img')?.naturalHeight > 0", timeout=120_000)
    width, height, box, scrolls = page.evaluate("""() => { const img = document.querySelector('#heatmap img');
        const box = img.parentElement; return [img.naturalWidth, img.naturalHeight, box.clientHeight,
        box.scrollHeight > box.clientHeight]; }""")
    assert width > 0 and 0 < height < 16383 and scrolls, (width, height, box)  # a tall heatmap scrolls in its box
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True)
    result = scorer.score_result([LONG_CANDIDATE], [[SHORT_REFERENCE]])
    scores = page.locator("#scores").inner_text()
    assert str(round(float(result.raw[2][0]), 6)) in scores and str(round(float(result.rescaled[2][0]), 6)) in scores
    assert page.locator(".toast-body").count() == 0 and not _tables_wider_than_their_box(page)
    # Past the model's 512 tokens the scores, like bert-score's, use the first ones only: the page says so.
    assert f"longer than the model's {scorer.max_length} tokens" in page.locator("#pair-note").inner_text()


@browser_test
def test_no_table_is_wider_than_its_box_and_a_text_is_a_click_away(page, tmp_path):
    # The Batch table was 3,035 px wide in a 1,214 px box, every score off-screen.
    long = "The committee discussed the budget and the plans for next year, the hospital and the roads. " * 4
    data = tmp_path / "pairs.tsv"
    data.write_text(
        f"candidate\treference\tsecond\n{long}\t{long[::-1]}\tA short one.\nIt is raining.\tRain is falling.\tIt rains.\n"
    )
    _batch(page, data, "reference, second")
    page.wait_for_function("document.querySelector('#summary')?.innerText.includes('2 pairs')", timeout=120_000)
    headers = page.locator("#results thead").first.inner_text()
    assert headers.index("F1 (rescaled)") < headers.index("best ref for F1") < headers.index("candidate")
    assert not _tables_wider_than_their_box(page)
    cell = page.locator("#results [role=gridcell]").filter(has_text="The committee discussed").first
    assert long.strip() not in cell.inner_text()  # shortened on screen…
    cell.click()
    page.wait_for_function(
        "t => document.querySelector('#results').innerText.includes(t)", arg=long.strip(), timeout=10_000
    )
    assert not _tables_wider_than_their_box(page)  # …and the whole text, a click away, wraps in the box


@browser_test
def test_blank_lines_separate_pasted_systems(page):
    # "System baseline has 5 lines but the references have 4".
    refs = ["The cat sat on the mat.", "It is raining.", "The meeting was postponed.", "Prices rose."]
    systems = {
        "baseline": ["A cat sat on a mat.", "It rains.", "The meeting was delayed.", "Prices went up."],
        "other": ["The cat sat.", "Rain.", "", "Prices rose sharply."],
    }
    # Each block ends in a blank line; the empty output is written as the Space says (a line "").
    pasted = "".join(
        f"=== {name}\n" + "".join(f"{line or fb.space.EMPTY_LINE}\n" for line in lines) + "\n"
        for name, lines in systems.items()
    )
    page.get_by_role("tab", name="Compare systems").click()
    page.locator("#paste").get_by_text("…or paste them").click()
    page.locator("#ref-text textarea").fill("\n".join(refs) + "\n\n")
    page.locator("#systems-text textarea").fill(pasted)
    page.locator("#compare-button").click()
    page.wait_for_function(
        "document.querySelector('#compare-summary')?.innerText.includes('2 systems')", timeout=120_000
    )
    expected = fb.compare(systems, refs, model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True)
    table = page.locator("#compare-table").inner_text()
    for s in expected.systems:
        assert f"{s.scores[2]:.4f}".rstrip("0") in table
    assert expected.signature in page.locator("#compare-summary").inner_text()


@browser_test
def test_every_number_says_raw_or_rescaled(page, tmp_path):
    # Rescaled P/R/F under plain "P/R/F1" headers; raw means beside a rescaled hash.
    files, refs_file, _, _ = _system_files(tmp_path, 2)
    _compare_uploads(page, refs_file, files)
    for rescaled in (True, False):
        if not rescaled:
            page.locator("#rescale input").uncheck()
        page.locator("#compare-button").click()
        kind = "rescaled" if rescaled else "raw"
        # The table shows its column names before a run: the run has ended when the summary says so.
        page.wait_for_function(
            "t => document.querySelector('#compare-summary')?.innerText.includes(t)",
            arg="rescaled with the baseline" if rescaled else "raw (not rescaled)",
            timeout=120_000,
        )
        headers = page.locator("#compare-table thead").first.inner_text()
        assert all(f"{c} ({kind})" in headers for c in ("P", "R", "F1"))
        assert not _tables_wider_than_their_box(page)
    data = tmp_path / "pairs.tsv"
    data.write_text("candidate\treference\nThe cat sat on the mat.\tA cat was sitting on the mat.\n")
    page.locator("#rescale input").check()
    _batch(page, data)
    page.wait_for_function("document.querySelector('#summary')?.innerText.includes('1 pairs')", timeout=120_000)
    raw_hash = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en").hash
    rescaled_hash = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True).hash
    raw_line, rescaled_line = page.locator("#summary").inner_text().splitlines()[1:3]
    assert "mean raw" in raw_line and raw_hash in raw_line and rescaled_hash not in raw_line
    assert "mean rescaled" in rescaled_line and rescaled_hash in rescaled_line


@browser_test
def test_an_error_clears_the_previous_outputs_and_says_why(page):
    # After an error, "Reference 1 of 1 counted…" and the old scores stayed beside the Error badges.
    _score_pair(page, CAND, REF)
    page.wait_for_function(
        "document.querySelector('#counted')?.innerText.includes('Reference 1 of 1')", timeout=120_000
    )
    _score_pair(page, CAND, "")
    page.locator(".toast-body").filter(has_text="The reference is empty").first.wait_for(timeout=60_000)
    assert "Reference 1 of 1" not in page.locator("#counted").inner_text()
    assert page.locator("#hashcode textarea").input_value() == ""
    assert "rescaled" not in page.locator("#hashcode").inner_text()  # the label of the last run's kind is gone too
    assert (
        str(round(float(fb.score([CAND], [REF], model_type=fb.DEFAULT_MODEL)[2][0]), 6))
        not in page.locator("#scores").inner_text()
    )
    assert page.locator("#heatmap img").count() == 0


def test_a_model_that_cannot_be_loaded_is_one_message(app_url):
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError) as raised:
        Client(app_url, verbose=False).predict(CAND, REF, UNLOADABLE, api_name="/score")
    message = str(raised.value)
    assert UNLOADABLE in message and "\n" not in message and "Traceback" not in message
    assert "not served here" not in message  # listed by the deployer: it got as far as a load


def test_a_model_off_the_list_is_refused(app_url):
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="The model 'someone/any-model' is not served here"):
        Client(app_url, verbose=False).predict(CAND, REF, "someone/any-model", api_name="/score")


# The Space's last rough edges, as a user or an API caller meets them.
@browser_test
def test_tables_show_their_column_names_before_the_first_run(page):
    # "Scores" and "Best matches" (and the Batch and Compare tables) showed column headers 1 2 3.
    expected = {
        "scores": ["scores", "P", "R", "F1"],
        "matches": ["candidate token", "best reference token", "similarity (rescaled)"],
        "results": ["#", "P (raw)", "F1 (rescaled)", "candidate", "reference"],
        "compare-table": ["system", "F1 (rescaled)", "F1 ± 95%", "p-value"],
    }
    for tab, ids in (("Pair", ["scores", "matches"]), ("Batch", ["results"]), ("Compare systems", ["compare-table"])):
        page.get_by_role("tab", name=tab).click()
        for table in ids:
            headers = [h.strip() for h in page.locator(f"#{table} thead th").all_inner_texts() if h.strip()]
            assert not any(h.isdigit() for h in headers) and all(name in headers for name in expected[table]), (
                table,
                headers,
            )


@browser_test
def test_the_reference_past_the_cut_is_marked_not_scored(page):
    # The missed-words panel showed the reference's tail past the cut unmarked, starting mid-word.
    _score_pair(page, SHORT_REFERENCE, LONG_CANDIDATE)
    label = f"not scored (past the model's {fb.BERTScorer(model_type=fb.DEFAULT_MODEL).token_limit} tokens)"
    page.wait_for_function(
        "t => document.querySelector('#missing')?.innerText.toLowerCase().includes(t)", arg=label, timeout=120_000
    )


def test_score_refuses_a_list_by_naming_the_argument(app_url):
    # Client.predict(["a", "b"], "c", api_name="/score") answered "The candidate is empty: type some text".
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(app_url, verbose=False)
    with pytest.raises(AppError, match="rgument 'candidate' of /score must be a string; got list"):
        client.predict(["a", "b"], "c", api_name="/score")
    with pytest.raises(AppError, match="rgument 'reference' of /score must be a string; got int"):
        client.predict("a", 3, api_name="/score")


def test_a_language_without_a_baseline_says_what_a_browser_user_can_do(app_url):
    # The note named server paths and CLI flags a Space user cannot act on.
    from gradio_client import Client

    out = Client(app_url, verbose=False).predict(
        CAND, REF, fb.DEFAULT_MODEL, "", "de", False, True, "float32", api_name="/score_pair"
    )
    note = out[3] if isinstance(out[3], str) else out[3]["value"]
    assert "no rescaling baseline for language 'de'" in note and "untick 'Also show rescaled scores'" in note
    assert "--" not in note and "bertscore-" not in note and "/" not in note.replace(fb.DEFAULT_MODEL, "")


def test_the_server_refuses_an_upload_over_the_limit(app_url):
    # Demo.launch() set no max_file_size, so any upload was stored whole before a handler ran.
    import httpx

    upload = app_url + "gradio_api/upload"
    too_big = httpx.post(upload, files={"files": ("big.csv", b"x" * (fb.space.MAX_UPLOAD_BYTES + 1))}, timeout=60)
    assert too_big.status_code == 413 and f"{fb.space.MAX_UPLOAD_BYTES}" in too_big.text
    assert httpx.post(upload, files={"files": ("small.csv", b"candidate,reference\n")}, timeout=60).status_code == 200


def test_a_failed_upload_names_the_file_not_the_servers_folder(app_url, tmp_path):
    # "cannot read /tmp/gradio/<hash>/refs.txt" showed every visitor the server's upload folder.
    from gradio_client import Client, handle_file
    from gradio_client.exceptions import AppError

    refs = tmp_path / "refs.txt"
    refs.write_bytes(b"caf\xe9\n")
    with pytest.raises(AppError) as raised:
        Client(app_url, verbose=False).predict(
            handle_file(str(refs)), "", None, "=== a\nx\n=== b\ny\n", api_name="/compare"
        )
    message = str(raised.value)
    assert "refs.txt" in message and "/" not in message, message
