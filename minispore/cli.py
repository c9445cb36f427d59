"""Command line: `python -m minispore demo|info|bench|check|run` (or the `minispore` script)."""
from __future__ import annotations

import argparse
import sys


DEMO_MODELS = ("cnn", "mlp", "lstm", "transformer")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m minispore", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    demo = sub.add_parser("demo", help="train a CNN and an MLP on the digits data on the CPU "
                                       "(GRAPH and PYNATIVE) and the simulated Ascend")
    demo.add_argument("--epochs", type=int, default=10, help="training epochs of the digits "
                                                             "models (default 10)")
    demo.add_argument("--models", default="cnn,mlp",
                      help="comma-separated, from cnn,mlp (digits classifiers) and lstm,"
                           "transformer (character language models on textwrap.py's source); "
                           "default cnn,mlp")
    demo.add_argument("--steps", type=int, default=150,
                      help="training steps of the character models (default 150)")
    demo.add_argument("--examples", action="store_true",
                      help="run MindSpore's three mode-documentation examples instead")
    info = sub.add_parser("info", help="show the version and which backends are usable here")
    info.add_argument("--profile", nargs="?", const="Ascend910B", metavar="NAME",
                      help="print a simulated Ascend device profile: every parameter with its "
                           "unit and source (Ascend910B, Ascend310P)")
    bench = sub.add_parser("bench", help="benchmark workloads on every usable backend in "
                                         "PyNative, Graph and loop sink, beside peers")
    from .bench import add_arguments
    add_arguments(bench)
    check = sub.add_parser("check", help="run a script in PyNative and in GRAPH_MODE, compare "
                                         "what it prints, and list its graph-syntax problems")
    check.add_argument("script")
    check.add_argument("script_args", nargs=argparse.REMAINDER)
    check.add_argument("--rtol", type=float, default=1e-5,
                       help="relative tolerance of printed numbers (default 1e-5)")
    check.add_argument("--timeout", type=float, default=600, help="seconds per run")
    run = sub.add_parser("run", help="start a distributed job on this machine (MindSpore's "
                                     "msrun): N ranks of a script under mpiexec")
    run.add_argument("-n", "--nprocs", type=int, required=True, help="number of ranks")
    run.add_argument("--timeout", type=float, default=None,
                     help="stop the job after this many seconds (exit code 124)")
    run.add_argument("script")
    run.add_argument("script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.cmd == "run":
        from .communication.launcher import run as run_job
        return run_job(args.nprocs, args.script, args.script_args, timeout=args.timeout)
    if args.cmd == "check":
        from .check_script import check as check_script
        return check_script(args.script, args.script_args, rtol=args.rtol, timeout=args.timeout)
    if args.cmd == "bench":
        from .bench import main as bench_main
        return bench_main(args)
    if args.cmd == "demo" and args.examples:
        from . import demo
        demo.run()
    elif args.cmd == "demo":
        models = [m.strip() for m in args.models.split(",") if m.strip()]
        bad = [m for m in models if m not in DEMO_MODELS]
        if bad or not models:
            p.error(f"--models: {', '.join(bad) or 'none given'}; choose from "
                    f"{','.join(DEMO_MODELS)}")
        digits = [m.upper() for m in models if m in ("cnn", "mlp")]
        if digits:
            from . import digits_demo
            digits_demo.run(epochs=args.epochs, models=tuple(digits))
        sequence = [m for m in models if m in ("lstm", "transformer")]
        if sequence:
            from . import sequence_demo
            sequence_demo.run(models=tuple(sequence), steps=args.steps)
    elif args.cmd == "info":
        import minispore
        from .core.device import availability
        print(f"minispore {minispore.__version__}")
        for target, (ok, why) in availability().items():
            note = " (simulated NPU: model time, not hardware)" if target == "Ascend" else ""
            print(f"  {target:7s} {'usable' + note if ok else 'not usable: ' + why}")
        if args.profile:
            from .backends.ascend_sim.profile import PROFILES
            if args.profile not in PROFILES:
                p.error(f"--profile: choose one of {', '.join(PROFILES)}")
            print(f"\nsimulated device profile {args.profile} "
                  f"(backends/ascend_sim/profile.py):")
            for name, value, unit, source in PROFILES[args.profile].rows():
                print(f"  {name:22s} {value!s:>14s} {unit:20s} {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
