"""``bertscore correlate`` and ``bertscore tune-layer``: agreement with human ratings, per layer."""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from fastbertscore.cli.common import Parser, add_arguments, check_outputs, from_arguments, guarded, whole_number
from fastbertscore.files import write_atomic
from fastbertscore.models.defaults import DEFAULT_MODEL

if TYPE_CHECKING:
    from fastbertscore.metaeval import Judgments
    from fastbertscore.scorer import BERTScorer

HELP = {
    "correlate": "correlations per layer, per group and pooled, beside chrF and SentBLEU",
    "tune-layer": "pick the layer whose F agrees best with the ratings (mean segment-level τ)",
}


def _parse(command: str, argv: list[str]) -> argparse.Namespace:
    p = Parser(prog=f"bertscore {command}", description=HELP[command])
    p.add_argument("--data", type=Path, required=True, help="CSV or TSV with candidate, reference and human columns")
    p.add_argument("-m", "--model", default=DEFAULT_MODEL)
    p.add_argument("--cand-column", default="candidate")
    p.add_argument("--ref-column", default="reference")
    p.add_argument("--human-column", default="human")
    p.add_argument(
        "--group", help="comma-separated grouping columns, each in the file (default: year,lp where the file has them)"
    )
    p.add_argument("--system-column", default="system")
    p.add_argument("--segment-column", default="seg_id")
    p.add_argument("--limit", type=whole_number(1), help="only the first N rows")
    p.add_argument(
        "--bootstrap", type=whole_number(0), default=1000, help="resamples for the 95%% interval of τ (0: none)"
    )
    p.add_argument("--seed", type=int, default=0)
    add_arguments(p, exclude=("model_type",))
    p.add_argument("--no-surface", action="store_true", help="skip chrF and SentBLEU")
    if command == "correlate":
        p.add_argument(
            "--system-level",
            action="store_true",
            help="system-level agreement instead: pairwise accuracy of system rankings and τ per group",
        )
    p.add_argument("--out", type=Path, help="write the Markdown table here (and a .csv beside it)")
    p.add_argument("--plot", type=Path, help="write a plot of τ against layer")
    if command == "tune-layer":
        p.add_argument(
            "--record", action="store_true", help="save the layer as the model's default in the user registry"
        )
    args = p.parse_args(argv)
    args.verbose = False
    return args


def _run(args: argparse.Namespace) -> int:
    from fastbertscore import metaeval
    from fastbertscore.front import resolve
    from fastbertscore.models import layer_registry as registry

    if not args.data.is_file():
        raise ValueError(f"--data {args.data} not found")
    check_outputs(args, _outputs(args), {"--data": args.data}, updates=_updates(args))
    if getattr(args, "record", False):
        registry.read()  # a registry --record could not write is refused now, not after the work
    data = metaeval.read_judgments(
        args.data,
        cand=args.cand_column,
        ref=args.ref_column,
        human=args.human_column,
        group=None if args.group is None else tuple(g for g in args.group.split(",") if g),
        system=args.system_column,
        segment=args.segment_column,
        limit=args.limit,
    )
    settings = from_arguments(args, model_type=args.model, all_layers=True)
    scorer, _ = resolve(settings, idf_texts=data.refs, shared=False)
    if getattr(args, "system_level", False):
        return _system_level(args, scorer, data)
    report = metaeval.meta_evaluate(scorer, data, bootstrap=args.bootstrap, seed=args.seed, surface=not args.no_surface)
    table = metaeval.markdown(report)
    print(table)
    if args.out:
        write_atomic(args.out, table)
        metaeval.write_csv(report, args.out.with_suffix(".csv"))
    if args.plot:
        metaeval.plot(report, args.plot)
    best = report.best_layer()
    print(
        f"best layer for {args.model} on {args.data.name} ({len(data.cands)} rows): {best} "
        f"(mean segment-level τ of F {report.layer_curve()[best]:.4f}); one dataset's winner is a guess for other domains"
    )
    if getattr(args, "record", False):
        path = registry.record(
            args.model,
            best,
            data=args.data.name,
            rows=len(data.cands),
            mean_tau=report.layer_curve()[best],
            date=date.today().isoformat(),
        )
        print(f"recorded layer {best} for {args.model} in {path}")
    return 0


def _system_level(args: argparse.Namespace, scorer: BERTScorer, data: Judgments) -> int:
    from fastbertscore import metaeval
    from fastbertscore.models.defaults import default_layer
    from fastbertscore.models.loading import model_id

    every = metaeval.bertscore_all_layers(scorer, data)
    tuned, _ = default_layer(model_id(args.model), every.shape[0] - 1)
    scores = {
        f"BERTScore F L{layer}{' (default)' if layer == tuned else ''}": every[layer, :, 2]
        for layer in range(every.shape[0])
    }
    if not args.no_surface:
        scores.update(metaeval.surface_metrics(data))
    results = metaeval.system_level(scores, data, bootstrap=args.bootstrap, seed=args.seed)
    table = metaeval.system_markdown(results, highlight=next(n for n in scores if "(default)" in n))
    print(table)
    if args.out:
        write_atomic(args.out, table)
    return 0


def _outputs(args: argparse.Namespace) -> dict[str, Path]:
    """Every file this run will write, by how the user named it: checked against the inputs (and each other)
    before any model work."""
    outputs = {}
    if args.out:
        outputs["--out"] = args.out
        if not getattr(args, "system_level", False):
            outputs["--out's .csv"] = args.out.with_suffix(".csv")
    if args.plot:
        outputs["--plot"] = args.plot
    return outputs


def _updates(args: argparse.Namespace) -> dict[str, Path]:
    """The file this run reads and rewrites on purpose: ``--record``'s layer registry."""
    from fastbertscore.models.layer_registry import registry_path

    return {"--record's layer registry": registry_path()} if getattr(args, "record", False) else {}


def main(argv: list[str]) -> int:
    """``bertscore correlate``."""
    return guarded("bertscore", _run, _parse("correlate", argv))


def tune_layer(argv: list[str]) -> int:
    """``bertscore tune-layer``."""
    return guarded("bertscore", _run, _parse("tune-layer", argv))
