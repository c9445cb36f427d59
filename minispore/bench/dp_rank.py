"""One rank of the bench's data-parallel job (data_parallel.mpi_job starts it under
`python -m minispore run -n P`): joins the job, runs data_parallel.measure for every
(workload, mode) of the JSON spec in argv[1], and prints one `RESULT <json>` line per case."""
import json
import sys

from minispore.bench.data_parallel import measure
from minispore.communication import get_rank, init


def main() -> None:
    spec = json.loads(sys.argv[1])
    init()
    rank = get_rank()
    for workload, mode in spec["cases"]:
        try:
            row = measure(workload, mode, spec["steps"], spec["repeats"], rank)
        except Exception as e:       # reported, not raised: the job's other cases still run
            row = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
        print("RESULT " + json.dumps({**row, "workload": workload, "mode": mode,
                                      "rank": rank}), flush=True)


if __name__ == "__main__":
    main()
