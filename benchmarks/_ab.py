"""A/B of an environment setting read when dgarray's backend starts: one
process per (round, value), the values alternating in order from round to
round, each process printing its rows on one line (used by
transfer_ab.py and reduce_ab.py)."""
import argparse
import os
import subprocess
import sys
import time


def run_ab(script, var, values, rounds, timeout):
    """Runs `python script --rows` with var=value for each value, `rounds`
    times; prints each process's line as it ends.  Returns 0, or 1 after
    the first process that failed (its stderr's tail printed)."""
    env0 = dict(os.environ)
    import dgarray as dg
    if dg.backend() != "cuda":
        env0["DGARRAY_AB_SMALL"] = "1"  # the CPU backend: small sizes, to check the script
    total, k = rounds * len(values), 0
    width = max(len(v) for v in values)
    for rnd in range(rounds):
        for value in (values if rnd % 2 == 0 else values[::-1]):
            k += 1
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, script, "--rows"], env=dict(env0, **{var: value}),
                               capture_output=True, text=True, timeout=timeout)
            if r.returncode != 0:
                print(f"[{k}/{total}] {var}={value}: failed\n{r.stderr[-2000:]}", flush=True)
                return 1
            print(f"[{k}/{total}] {var}={value:{width}s} {r.stdout.strip()}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


def cli(script, var, flag, default, rows, doc, rounds, timeout=180):
    """The command line of an A/B script: `script --rows` prints one
    process's rows (rows()); otherwise --rounds, `flag` (the values of var,
    comma-separated; default `default`) and --timeout (seconds per process),
    then run_ab.  Returns the exit status."""
    if sys.argv[1:] == ["--rows"]:
        rows()
        return 0
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument(flag, dest="values", default=default,
                    help=f"the values of {var}, comma-separated")
    ap.add_argument("--timeout", type=float, default=timeout, help="seconds per process")
    args = ap.parse_args()
    return run_ab(script, var, args.values.split(","), args.rounds, args.timeout)
