"""Command line: `python -m minispore demo` (or the `minispore` script)."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m minispore", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("demo", help="run the mode-documentation examples on the CPU")
    sub.add_parser("info", help="show the version and which backends are usable here")
    args = p.parse_args(argv)
    if args.cmd == "demo":
        from . import demo
        demo.run()
    elif args.cmd == "info":
        import minispore
        from .core.device import availability
        print(f"minispore {minispore.__version__}")
        for target, (ok, why) in availability().items():
            print(f"  {target:7s} {'usable' if ok else 'not usable: ' + why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
