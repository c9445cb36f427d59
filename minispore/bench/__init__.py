"""`python -m minispore bench`: minispore's workloads on every usable backend in PyNative, Graph
and loop sink, beside numpy and the peer frameworks importable here (workloads.py, peers.py),
measured by runner.py and shown by report.py (table, JSON, optional PNG)."""
from __future__ import annotations

from . import workloads
from .data_parallel import DEFAULT_RANKS, machine_ranks
from .peers import PEERS

ALL_BACKENDS = ("CPU", "GPU", "Ascend")


def _choices(text: str | None, allowed, default, what: str) -> list:
    if not text:
        return list(default)
    got = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in got if x not in allowed]
    if bad:
        raise ValueError(f"--{what}: {', '.join(bad)} not valid; choose from "
                         f"{', '.join(allowed)}")
    return got


def _ranks(text: str | None) -> list:
    if not text:
        return list(DEFAULT_RANKS)
    try:
        got = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--ranks: {text!r} is not a comma-separated list of numbers of "
                         f"devices, e.g. 1,2,4,8") from None
    if not got or any(n < 1 for n in got):
        raise ValueError(f"--ranks: every number of devices must be >= 1, but got {text!r}")
    return sorted(set(got))


def add_arguments(p) -> None:
    """The `bench` subcommand's options (cli.py)."""
    p.add_argument("--backends", help=f"comma-separated device targets (default: all of "
                                      f"{','.join(ALL_BACKENDS)}; unusable ones are reported "
                                      f"as skipped, with the reason)")
    p.add_argument("--modes", help=f"comma-separated, from {','.join(workloads.MODES)} (default "
                                   f"{','.join(workloads.DEFAULT_MODES)})")
    p.add_argument("--workloads", help=f"comma-separated, from {','.join(workloads.WORKLOADS)} "
                                       f"(default: {','.join(workloads.DEFAULT_WORKLOADS)})")
    p.add_argument("--peers", help=f"comma-separated, from {','.join(PEERS)} (default: all; "
                                   f"those not importable here are skipped); 'none' for none")
    p.add_argument("--quick", action="store_true",
                   help="smaller inputs, shorter repeats (about 0.05 s each), 3 repeats")
    p.add_argument("--repeat", type=int, metavar="N", help="repeats per row (default 5, "
                                                           "--quick 3)")
    p.add_argument("--target-ms", type=float, metavar="MS",
                   help="length of one repeat (default 300, --quick 50)")
    p.add_argument("--json", default="bench-results/bench.json", metavar="PATH",
                   help="where to write the results (default bench-results/bench.json)")
    p.add_argument("--plot", nargs="?", const="", metavar="PNG",
                   help="also draw a bar chart (needs matplotlib); default path: the JSON's "
                        "with .png")
    p.add_argument("--ranks", metavar="N,N,...",
                   help=f"data-parallel workloads (dp-mlp, dp-cnn): comma-separated numbers of "
                        f"simulated Ascend devices (default "
                        f"{','.join(map(str, DEFAULT_RANKS))})")
    p.add_argument("--mpi-ranks", type=int, metavar="N",
                   help="data-parallel workloads: run rank counts up to N as real MPI jobs, "
                        "larger ones by the model (default: this machine's CPU count; 0: "
                        "model only)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(args) -> int:
    from . import report, runner
    try:
        opts = runner.Options(
            backends=_choices(args.backends, ALL_BACKENDS, ALL_BACKENDS, "backends"),
            modes=_choices(args.modes, tuple(workloads.MODES), workloads.DEFAULT_MODES, "modes"),
            workloads=_choices(args.workloads, tuple(workloads.WORKLOADS),
                               workloads.DEFAULT_WORKLOADS, "workloads"),
            peers=[] if args.peers == "none" else _choices(args.peers, PEERS, PEERS, "peers"),
            ranks=_ranks(args.ranks),
            mpi_ranks=machine_ranks() if args.mpi_ranks is None else args.mpi_ranks,
            quick=args.quick, repeat=args.repeat,
            target_s=None if args.target_ms is None else args.target_ms / 1e3,
            progress=not args.no_progress)
    except ValueError as e:
        raise SystemExit(f"python -m minispore bench: {e}")
    if opts.repeat is not None and opts.repeat < 1:
        raise SystemExit("python -m minispore bench: --repeat must be >= 1")
    if opts.mpi_ranks < 0:
        raise SystemExit("python -m minispore bench: --mpi-ranks must be >= 0")
    result = runner.run(opts)
    report.print_table(result)
    print(f"results: {report.write_json(result, args.json)}")
    if args.plot is not None:
        png = args.plot or args.json.rsplit(".", 1)[0] + ".png"
        if report.plot(result, png):
            print(f"plot: {png}")
    return 0
