"""Rank script: each rank prints a line and meets the others at a barrier; then rank 1 exits
with the code given as argv[1] (the launcher must return it) while rank 0 exits 0."""
import sys

from minispore.communication import comm_func, get_rank, init

init()
print(f"hello from {get_rank()}", flush=True)
print(f"note from {get_rank()}", file=sys.stderr, flush=True)
comm_func.barrier()
if get_rank() == 1:
    sys.exit(int(sys.argv[1]))
