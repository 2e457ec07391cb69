"""What each of the Space's buttons does, as plain functions: boxes in, numbers, tables and figures out.

Each tab has one handler (``score_pair``, ``score_file``, ``compare_systems``, ``score_api``) that a test calls directly,
with no browser and no Gradio. Its body is two steps: it refuses bad input (``ValueError``/``TypeError`` naming the
box and the limit) and counts the request's work (:mod:`~fastbertscore.space.work`) with no model work, then hands
the model step, a :class:`~fastbertscore.space.runner.Job`, to ``run``: by default the job runs here; the page
(:mod:`fastbertscore.space.demo`) passes a ``run`` that queues it on the one model thread, whose hook its encoder
batches call (its deadline), so the checks run on the request's own thread and a refusal never waits for the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import cast

from fastbertscore.explanations.explanation import explain
from fastbertscore.models.defaults import DEFAULT_MODEL
from fastbertscore.pipeline.budget import BatchHook
from fastbertscore.settings import DType, Settings
from fastbertscore.significance import compare
from fastbertscore.significance.resampling import Test
from fastbertscore.space import inputs, tables
from fastbertscore.space.allowed import check_allowed_model
from fastbertscore.space.api import check_score_arguments, score_json
from fastbertscore.space.charts import f1_chart, histogram
from fastbertscore.space.limits import CACHE_MB, MAX_SYSTEMS, check_box, check_samples, check_seed
from fastbertscore.space.models import load_scorer, loading, of_kind, scored, scorer_of_kind
from fastbertscore.space.runner import Job, Run, here
from fastbertscore.space.systems import check_systems, gather_systems, parse_lines
from fastbertscore.space.uploads import Upload, check_size, check_total, lines_of, rows_of, upload_path, write_results
from fastbertscore.space.views import TESTS, BatchView, CompareView, Options, PairView
from fastbertscore.space.words import reference_words
from fastbertscore.space.work import Work, check_work, counting_model
from fastbertscore.validate import check_hub_model_id


def settings_for(options: Options) -> Settings:
    """The settings of these boxes, checked (the model against the Space's list, the layer and language boxes): no
    model work. With idf, the request's references are what it is counted over (:func:`load_scorer`)."""
    model_id = (options.model or "").strip() or DEFAULT_MODEL
    return Settings(
        model_type=check_allowed_model(check_hub_model_id(model_id)),  # a path first: never a folder
        num_layers=inputs.parse_layer(options.layer),
        cache_mb=CACHE_MB,
        lang=inputs.check_lang(options.lang),
        idf=bool(options.idf),
        dtype=cast("DType", options.dtype or "float32"),  # Settings checks it against its choices
    )


def counted(settings: Settings, texts: list[str], label: Callable[[int], str]) -> Work:
    """The work of ``texts`` with ``settings``' model (:func:`~fastbertscore.space.work.check_work`), its tokenizer
    loaded as :func:`loading` says."""
    with loading(settings.model_type_or_default):
        counting_model(settings.model_type_or_default, settings.use_fast_tokenizer)
    return check_work(settings, texts, label)


def colours(cut_at: int | None = None) -> dict[str, str]:
    """The missed-words panel's colours: missed words red, a text's part past the model's window grey."""
    return {"missing": "red", **({tables.past_cut_label(cut_at): "gray"} if cut_at else {})}


def job(step: Callable[[BatchHook], object], settings: Settings, work: Work) -> Job:
    """A checked request's model step as the model thread takes it: with its counted work and its model."""
    return Job(step, work.weighed, settings.model_type_or_default)


def _pair_label(n_refs: int) -> Callable[[int], str]:
    """How the page names text ``i`` of ``[candidate, *references]``."""
    return lambda i: "the candidate" if i == 0 else "the reference" if n_refs == 1 else f"reference {i}"


# Each handler checks its boxes (files read, limits held, work counted, no model work) where it is called, then
# gives its model step to ``run``.


def score_pair(
    candidate: str | None, references: str | None, options: Options | None = None, run: Run[PairView] = here
) -> PairView:
    """The Pair tab: one candidate against the reference box's lines, explained against the one that counted."""
    options = options or Options()
    candidate, refs = inputs.check_text(candidate, "The candidate"), inputs.parse_references(references)
    settings = settings_for(options)
    work = counted(settings, [candidate, *refs], _pair_label(len(refs)))
    return run(
        job(functools.partial(_pair, candidate, refs, settings, bool(options.do_rescale), work.notes), settings, work)
    )


def _pair(
    candidate: str, refs: list[str], settings: Settings, do_rescale: bool, notes: tuple[str, ...], hook: BatchHook
) -> PairView:
    scorer, note = load_scorer(settings, refs, rescaled=do_rescale)
    rescaled = do_rescale and scorer.rescale_with_baseline
    result = of_kind(scored(scorer, [candidate], [refs], hook), scorer, rescaled)
    best = refs[0] if result.best_reference is None else refs[int(result.best_reference[2][0])]
    # Against the reference that counted for F; similarities of the kind shown.
    tokens = explain(candidate, best, scorer=scorer, level="token", rescaled=rescaled)
    words, missed = reference_words(tokens, rescaled)
    cut = inputs.cut_note(scorer, {"candidate": candidate, "reference": best})
    cut_at = scorer.token_limit if inputs.is_cut(scorer, best) else None
    from fastbertscore.explanations.plot import similarity_figure  # matplotlib, on first use

    return PairView(
        scores=tables.pair_table(result),
        hashcode=result.hash,
        kind=tables.kind(rescaled),
        counted=tables.counted_note(result, len(refs)),
        note=tables.with_notes(" ".join(filter(None, [note, cut])), notes, " "),
        heatmap=similarity_figure(tokens, kind=tables.kind(rescaled)),
        missing=[*tables.highlight(best, words, missed, cut_at)],
        cut_at=cut_at,
        matches=tables.matches_table(tokens, rescaled),
        result=result,
    )


def score_file(
    file: Upload | None, cand_column: str, ref_columns: str, options: Options | None = None, run: Run[BatchView] = here
) -> BatchView:
    """The Batch tab: every row of an uploaded file (the file read, its references and work counted before any model
    work), a table, a result CSV, the means and a histogram."""
    options = options or Options()
    if file is None:
        raise ValueError("Upload a .csv, .tsv or .jsonl file first")
    inputs.candidate_column(cand_column)  # an empty column box, or one of thousands of columns, is refused
    inputs.reference_columns(ref_columns)  # before the file is read
    name = upload_path(file).name  # messages about the file's rows and columns name it
    cands, refs, groups = inputs.batch_pairs(rows_of(file), cand_column, ref_columns, file_name=name)
    settings = settings_for(options)
    rows = [*range(len(cands)), *(row for row, group in enumerate(groups) for _ in group)]
    texts = [*cands, *(r for g in groups for r in g)]
    work = counted(settings, texts, lambda i: f"row {rows[i] + 1}'s {'candidate' if i < len(cands) else 'reference'}")
    step = functools.partial(_file, cands, refs, groups, settings, bool(options.do_rescale), work.notes)
    return run(job(step, settings, work))


def _file(
    cands: list[str],
    refs: list[str] | list[list[str]],
    groups: list[list[str]],
    settings: Settings,
    do_rescale: bool,
    notes: tuple[str, ...],
    hook: BatchHook,
) -> BatchView:
    scorer, note = load_scorer(settings, groups, rescaled=do_rescale)
    result = of_kind(scored(scorer, cands, refs, hook), scorer, do_rescale)
    header, rows = tables.batch_table(cands, groups, result)
    summary = tables.with_notes(tables.batch_summary(result, scorer.signature), (note, *notes))
    histogram_figure = histogram(result.scores[2].tolist(), result.rescaled is not None)
    return BatchView((header, rows), write_results([header, *rows]), summary, histogram_figure, result)


def compare_systems(
    ref_file: Upload | None,
    ref_text: str | None,
    system_files: list[Upload] | None,
    systems_text: str | None,
    test: str,
    n_samples: float | None,
    seed: float | None,
    options: Options | None = None,
    run: Run[CompareView] = here,
) -> CompareView:
    """The Compare tab: corpus scores of 2 to :data:`~fastbertscore.space.limits.MAX_SYSTEMS` systems with 95%
    intervals, each tested against the first (the seed, the number of systems and every size checked before any
    file is read, the work counted before any model work)."""
    options = options or Options()
    n_samples = check_samples(n_samples)
    seed = check_seed(seed)
    if test not in TESTS:  # through the API any string arrives: an unknown one ran the bootstrap
        raise ValueError(f"Test {str(test)[:40]!r} is not one of: {', '.join(TESTS)}")
    system_files = system_files or []
    if len(system_files) > MAX_SYSTEMS:
        raise ValueError(f"{len(system_files)} system files were uploaded; the Space compares at most {MAX_SYSTEMS}")
    files = [ref_file, *system_files] if ref_file is not None else system_files
    for file in files:
        check_size(file)
    check_total(files)
    check_box(ref_text, "The references box")
    check_box(systems_text, "The systems box")
    if ref_file is not None and (ref_text or "").strip():  # one of them would be dropped in silence
        raise ValueError("The references were both uploaded and pasted: give them one way, the file or the box")
    refs = lines_of(ref_file)[1] if ref_file is not None else parse_lines(ref_text)
    systems = gather_systems([lines_of(file) for file in system_files], systems_text)
    check_systems(systems, refs)
    settings = settings_for(options)
    names = [name for name, lines in systems.items() for _ in lines]
    texts = [*refs, *(line for lines in systems.values() for line in lines)]
    n = len(refs)
    work = counted(
        settings, texts, lambda i: f"reference {i + 1}" if i < n else f"line {(i - n) % n + 1} of {names[i - n]}"
    )
    step = functools.partial(_compare, systems, refs, TESTS[test], n_samples, seed)
    return run(job(functools.partial(step, settings, bool(options.do_rescale), work.notes), settings, work))


def _compare(
    systems: dict[str, list[str]],
    refs: list[str],
    test: Test | None,
    n_samples: int | None,
    seed: int,
    settings: Settings,
    do_rescale: bool,
    notes: tuple[str, ...],
    hook: BatchHook,
) -> CompareView:
    scorer, note = load_scorer(settings, refs, rescaled=do_rescale)
    scorer = scorer_of_kind(scorer, do_rescale, refs)
    result = compare(systems, refs, test=test, n_samples=n_samples, seed=seed, scorer=scorer, between_batches=hook)
    rescaled = scorer.rescale_with_baseline
    summary = tables.with_notes(tables.compare_summary(result, len(refs), rescaled), (note, *notes))
    return CompareView(tables.compare_table(result, rescaled), summary, f1_chart(result, rescaled), result)


def score_api(
    candidate: str,
    reference: str,
    model: str | None = DEFAULT_MODEL,
    num_layers: str | int | None = "",
    lang: str | None = "en",
    idf: bool = False,
    dtype: str | None = "float32",
    run: Run[dict[str, object]] = here,
) -> dict[str, object]:
    """API endpoint: BERTScore of one candidate against one reference (several references: one per line)."""
    arguments = {"candidate": candidate, "reference": reference, "model": model, "num_layers": num_layers}
    check_score_arguments(**arguments, lang=lang, idf=idf, dtype=dtype)
    candidate, refs = inputs.check_text(candidate, "The candidate"), inputs.parse_references(reference)
    settings = settings_for(Options(model, num_layers, lang, idf, False, dtype))
    work = counted(settings, [candidate, *refs], _pair_label(len(refs)))
    return run(job(functools.partial(_score, candidate, refs, settings), settings, work))


def _score(candidate: str, refs: list[str], settings: Settings, hook: BatchHook) -> dict[str, object]:
    scorer, _ = load_scorer(settings, refs)
    return score_json(of_kind(scored(scorer, [candidate], [refs], hook), scorer, False))
