#!/usr/bin/env python3
"""Run SV-COMP's ConcurrencySafety tasks (unreach-call) of ../shared/svcomp with smc-run and
compare with their expected verdicts.

    python3 tests/svcomp.py [--smc-run PATH] [--timeout S] [--model M] [--engine E] [--only NAME...] [--json]
                            [--sample] [--verbose]

Each task is compiled as SV-COMP tasks are (at -O0: an optimiser removes the call of an empty
`reach_error`, and keeps a non-volatile flag in a register), against the SV-COMP header and stub library that
`smc-run --verifier-dir` writes (no shim of our own), and checked with --keep-going (and one
spurious wake-up per condition wait and thread, which POSIX allows), so that a
deadlock or hang met on the way does not end the search: only a reached error call
(`reach_error`, `__VERIFIER_error`) is a violation. Per folder it reports correct, wrong,
vacuous (every execution dropped by an assumption), unsupported (with why) and timeouts; per
task with --verbose. The dataset is $SMC_SVCOMP_DIR or ../shared/svcomp beside the checkout.
Exit status: 0 when no verdict is wrong, 1 otherwise, 2 on a usage error.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The fixed sample CI runs (--sample; under a minute here), each verdict correct today: a
# stack shared with threads (stack-2), the exit coming last (fib_bench-2), a reach_error of the
# task's own (lazy01, stateful01-1, sync01), spurious wake-ups (condvar_spurious_wakeup),
# functions atomic by name (read_write_lock-1, -2), nondet choices and abort() as a wait
# (podwr000_tso.opt, thin000_tso.opt), a hang met on the way (dekker, 15_dekker).
SAMPLE = ["lazy01", "condvar_spurious_wakeup", "read_write_lock-1", "read_write_lock-2",
          "podwr000_tso.opt", "thin000_tso.opt", "stateful01-1", "sync01", "bigshot_p",
          "singleton", "twostage_3", "qw2004-2", "15_dekker", "dekker", "stack-2", "fib_bench-2"]

# What marks a reached error call in an error's message: the stub's report, or an assertion
# inside a reach_error the task defines itself.
ERROR_CALL_MARKS = ("reach_error", "__VERIFIER_error")
# The message of an execution that called abort().
ABORT = "abort() called"


def dataset():
    d = os.environ.get("SMC_SVCOMP_DIR") or os.path.join(ROOT, "..", "shared", "svcomp")
    if not os.path.isfile(os.path.join(d, "tasks.tsv")):
        sys.exit(f"svcomp: no tasks.tsv in {d}; set SMC_SVCOMP_DIR")
    return d


def tasks(d):
    with open(os.path.join(d, "tasks.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("\t")))
            if row.get("folder"):
                yield row


def classify(task, d, smc, verifier, work, args):
    """(outcome, detail): outcome is correct, wrong, vacuous, unsupported or timeout."""
    src = os.path.join(d, task["folder"], task["source"])
    exe = os.path.join(work, task["folder"] + "-" + task["name"])
    cc = subprocess.run(
        ["cc", "-g", "-O0", "-pthread", "-w", f"-I{verifier}", src, "-o", exe,
         f"-L{verifier}", "-Wl,--as-needed", "-lsmc_verifier", f"-Wl,-rpath,{verifier}", "-lm"],
        capture_output=True, text=True)
    if cc.returncode != 0:
        first = (cc.stderr.strip().splitlines() or ["?"])[0]
        return "unsupported", f"does not compile: {first}"
    # (POSIX lets a condition wait return without a signal: one spurious wake-up per thread)
    cmd = [smc, "--json", "-q", "--keep-going", "--allow-exit-status", "--model", args.model,
           "--exec-timeout", "2", "--spurious-wakeups", "1", "-j", "1", exe]
    if args.engine:
        cmd += ["--engine", args.engine]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=work)
    except subprocess.TimeoutExpired:
        return "timeout", f"more than {args.timeout} s"
    last = (r.stdout.strip().splitlines() or [""])[-1]
    try:
        v = json.loads(last)
    except ValueError:
        why = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return "unsupported", why
    errors = v.get("errors") or []
    reached = any(any(m in (e.get("message") or "") for m in ERROR_CALL_MARKS) for e in errors)
    # abort() ends an execution without violating unreach-call (assume_abort_if_not): an
    # execution that ends in it checked nothing
    aborted = sum(e.get("count", 0) for e in errors if e.get("message") == ABORT)
    if not reached and (v.get("verdict") == "vacuous" or aborted >= v.get("executions", 0)):
        return "vacuous", "every execution was dropped by an assumption or abort()"
    if not reached and v.get("verdict") == "bounded":
        return "timeout", f"{v.get('bounded')} executions cut at --max-steps"
    got = "false" if reached else "true"
    others = sorted({e.get("kind") for e in errors if e.get("message") != ABORT and not any(
        m in (e.get("message") or "") for m in ERROR_CALL_MARKS)})
    detail = f"{v.get('executions')} executions" + (f"; also found: {', '.join(others)}" if others else "")
    return ("correct" if got == task["expected"] else "wrong"), f"got {got}; {detail}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smc-run", default=os.path.join(ROOT, "target", "release", "smc-run"))
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per task")
    p.add_argument("--model", default="sc", help="memory model (SV-COMP's tasks assume sc)")
    p.add_argument("--engine", help="exploration engine (interleaving or graph; default: the model's)")
    p.add_argument("--only", nargs="*", help="task names to run")
    p.add_argument("--json", action="store_true", help="one JSON object with every result")
    p.add_argument("--verbose", action="store_true", help="a line per task")
    p.add_argument("--sample", action="store_true",
                   help="only the fixed sample CI runs (SAMPLE), every one of which must be correct")
    args = p.parse_args()
    if args.sample:
        args.only = SAMPLE
    if not os.access(args.smc_run, os.X_OK):
        sys.exit(f"svcomp: no smc-run at {args.smc_run} (cargo build --release, or --smc-run)")
    d = dataset()
    work = tempfile.mkdtemp(prefix="smc-svcomp.")
    try:
        verifier = os.path.join(work, "verifier")
        subprocess.run([args.smc_run, "--verifier-dir", verifier], check=True,
                       capture_output=True)
        per_folder = OrderedDict()
        results = []
        for t in tasks(d):
            if args.only and t["name"] not in args.only:
                continue
            outcome, detail = classify(t, d, args.smc_run, verifier, work, args)
            results.append({"folder": t["folder"], "task": t["name"], "expected": t["expected"],
                            "outcome": outcome, "detail": detail})
            per_folder.setdefault(t["folder"], OrderedDict(
                (k, 0) for k in ("correct", "wrong", "vacuous", "unsupported", "timeout")))
            per_folder[t["folder"]][outcome] += 1
            if args.verbose or outcome not in ("correct",):
                print(f"{t['folder']}/{t['name']} (expected {t['expected']}): {outcome}: {detail}",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'folder':<18} correct wrong vacuous unsupported timeout")
    total = OrderedDict((k, 0) for k in ("correct", "wrong", "vacuous", "unsupported", "timeout"))
    for folder, c in per_folder.items():
        print(f"{folder:<18} " + " ".join(f"{c[k]:>{len(k)}}" for k in c))
        for k in c:
            total[k] += c[k]
    print(f"{'all':<18} " + " ".join(f"{total[k]:>{len(k)}}" for k in total))
    if args.json:
        print(json.dumps({"model": args.model, "results": results, "total": total}))
    if args.sample and total["correct"] != len(SAMPLE):
        sys.exit(f"svcomp: {len(SAMPLE) - total['correct']} task(s) of the sample not correct")
    sys.exit(1 if total["wrong"] else 0)


if __name__ == "__main__":
    main()
