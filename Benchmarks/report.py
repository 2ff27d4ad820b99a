#!/usr/bin/env python3
"""Runs every FeatureGate benchmark once and reports it against its budgets.

    python3 Benchmarks/report.py

One run of the harness (ordo-one/benchmark) is stored as the baseline `latest`; everything below is read from it:

1. Allocation budgets (gated): the harness's own `thresholds check` against Benchmarks/Thresholds/, then every
   sample of every budgeted benchmark must show zero mallocs (the harness checks the 90th percentile only); and the
   allocation ceilings below, on every sample.
2. Per-call medians, allocations per call, and the toggler's flip rate for contended benchmarks.
3. Ratio budgets (reported, not gated: timings on a shared two-core machine are not deterministic).

Exits non-zero if a benchmark fails or an allocation budget is broken. Ratios never change the exit status.
Needs only python3 and the Swift toolchain.
"""

import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
TARGET = "FeatureGateBenchmarks"
BASELINE = "latest"
EXPORT = PACKAGE / ".build" / "benchmark-report"
THRESHOLDS = PACKAGE / "Thresholds"
# Allocates exactly once per call; if it counts less, the allocation counter is not working and zero proves nothing.
CANARY = "Harness.mallocCanary"

# Ratio budgets: (what, numerator, denominator, "<=" or ">=", bound). A side is a benchmark (its median time per
# call) or a (benchmark, per-call metric) pair; a single string with "/" names a paired benchmark's per-sample ratio
# metric (x1000), whose median is the ratio.
PAIRED = "Contended.isEnabled-vs-rawLoad"
RATIO_BUDGETS = [
    ("isEnabled ÷ raw load, one thread", "Gate.isEnabled", "Floor.rawLoad", "<=", 2),
    ("isEnabled ÷ raw load, contended (paired samples)", f"{PAIRED}/isEnabled_per_rawLoad_x1000", None, "<=", 2),
    ("Airship-style ÷ isEnabled, one thread", "AirshipStyle.isEnabled", "Gate.isEnabled", ">=", 10),
    ("Airship-style ÷ isEnabled, contended", "AirshipStyle.isEnabled.contended",
     (PAIRED, "isEnabled_ps_per_call"), ">=", 50),
    ("config load ÷ bare decode, XML plist (paired samples)", "Config.load-vs-decode.xml/load_per_decode_x1000", None,
     "<=", 1.5),
    ("config load ÷ bare decode, binary plist (paired samples)",
     "Config.load-vs-decode.binary/load_per_decode_x1000", None, "<=", 1.5),
    ("config load ÷ bare decode, JSON (paired samples)", "Config.load-vs-decode.json/load_per_decode_x1000", None,
     "<=", 1.5),
    ("start-up (config, gate state, 1,000-record ledger) ÷ bare read and decode (paired samples)",
     "Startup.full-vs-bare/startup_per_bare_x1000", None, "<=", 2),
    ("launch over a 100,000-record ledger ÷ over a 10-record one", "Ledger.launch.100000", "Ledger.launch.10", "<=",
     1.5),
    ("one consent change on a 100,000-record ledger ÷ on a 10-record one", "Ledger.change.100000",
     "Ledger.change.10", "<=", 1.5),
    # Issue 37: `track` with the gate open, beside what an SDK would write without the package.
    ("track, gate open ÷ a bare locked append (paired samples)",
     "GatedIO.eventBuffer.track.open-vs-lockedAppend/track_per_lockedAppend_x1000", None, "<=", 3),
    ("track, gate open ÷ the seed's Task per event into an actor (paired samples)",
     "GatedIO.eventBuffer.track.open-vs-taskPerEvent/track_per_taskPerEvent_x1000", None, "<=", 0.2),
]

# Allocation ceilings (gated): (benchmark, metric, most allowed in any sample, what it protects). Counts for a fixed
# input are deterministic, like the zero budgets, but not zero; the harness's thresholds check only knows a band
# around an exact value, so these are held here, on every sample.
RESTRICTIONS = "TCF.decode.4095-every-vendor-restrictions"
ALLOCATION_CEILINGS = [
    # The 36,217-character string of issue 22. Measured: 4,114 mallocs (one per restriction, and 19) and 466,240
    # bytes, 13 per character of the string. When each restriction's range 1-65535 was expanded into an 8 KB bit
    # vector, the same decode made as many mallocs but asked for 33.9 MB.
    (RESTRICTIONS, "mallocs", 4_200, "decoding a TC string costs one allocation per restriction, not per vendor"),
    (RESTRICTIONS, "mallocBytes", 600_000, "a TC string's decoded size grows with its length, not with its ranges"),
    # Issue 17: a launch and a consent change over the checkpointed ledger. Measured: 295 mallocs for a launch over 10
    # records, 315 over 1,000 and over 100,000; 397 and 413 for a change. One ceiling for every size: a launch that
    # replayed the trail would make at least one malloc per record (100,000 and more).
    # 480 since issue 36: a launch also reads the take-away intents (before the gate state and the ledger) and the
    # owed purges, through the file-system seam; 375 at 10 records, 399 at 1,000 and 395 at 100,000 in the run that
    # set it, 1.09 between 100,000 and 10 records. Still far below one malloc per record.
    *[(f"Ledger.launch.{size}", "mallocs", 480, "a launch reads the ledger's checkpoint, not its history")
      for size in (10, 1000, 100000)],
    # 560 since the ledger became the commit point (issue 36): a change also records the ledger's length in the gate
    # state and checks for take-away intents; 514 at 10 records, 531 at 1,000 and 100,000 in the run that set it.
    # 720 since a refusal is recorded off the caller's thread (issue 47, item 1): the sample is the denial's call (an
    # intent written) and its flush (`synchronize()`: the flusher reads the intent, appends the record and the
    # checkpoint, writes the gate state, deletes the intent); 564-639 at 10 records, 590-665 at 1,000 and 591 at
    # 100,000 in the run that set it. The check of the ledger's tail for records already folded compares bytes in
    # place (it made one string per line of a 64 KiB window: 1,035 mallocs, and 2.6 x the time, at 100,000 records).
    *[(f"Ledger.change.{size}", "mallocs", 720, "a consent change appends and checkpoints, whatever the history")
      for size in (10, 1000, 100000)],
    # The open gate's track, since it keeps each event's consent and user id (issue 46): a sample is 1,000 tracks and
    # 1,000 appends under a lock into a reserved array, paired. Measured: at most 1 malloc in a sample (the buffer's
    # growth). A track that allocated per event (a box for the consent snapshot, a copied string) would make 1,000.
    ("GatedIO.eventBuffer.track.open-vs-lockedAppend", "mallocs", 10,
     "an open gate's track allocates nothing per event (1,000 tracks and 1,000 locked appends a sample)"),
]

# Issue 47: flushes per operation (gated; the most in any sample). Counted in the benchmark process by CFlushCounter
# (every fsync and fdatasync, until none came for 10 ms after the call), one operation per sample on a directory of its
# own that an earlier change already created (so no first mkdir is counted). The issue's own table counted fresh
# processes with strace (a disable 2 (1 of a directory), a consent change 5 (2), revoke-all 16 (7), a take-away behind
# a busy lock 3 (2), revoke-all behind one 12 (8)); its floors: 1 for a disable, a consent change and a take-away behind
# a busy lock (at most 2), about 2 for revoke-all (at most 3). Item 2 (flushes at the floor) set the budgets to the
# counts it reached: a consent change's gate state leaves its rename to the ledger line that commits it, the checkpoint
# is never flushed, revoke-all writes its record once and its pending record's removal flushes only its data. Still
# above the issue's floors: revoke-all (its record, its refusals' ledger line, the identifier's deletion, its removal:
# 5) and a take-away behind a busy lock on a directory without an intents folder (the folder's entry: 3; 2 once it
# stands).
FLUSH_BUDGETS = [
    # (benchmark, budget: flushes, of them directories; before item 2: flushes, of them directories)
    ("Device.disable", 2, 1, 2, 1),
    # Item 1: the disable's pending change is unflushed, its flusher's save 2 (1) once the holder lets go.
    ("Device.disable.busyLock", 2, 1, 3, 2),
    # Item 1 for refusals: the denial's record goes into the ledger with the flusher's pass, which also removes its
    # intent and flushes that removal once (a plain directory flush): 3 (1), from 2 (0) on the caller's thread.
    ("Device.consent.deny", 3, 1, 5, 2),
    ("Device.consent.grant", 2, 0, 5, 2),
    ("Device.revokeAll", 5, 2, 10, 5),
    # Before: measured with issue 47's item 3 in (the identifier's deletion owed, not waited for).
    ("Device.revokeAll.busyLock", 5, 3, 6, 4),
]

# Issue 47, item 1: no flush on the caller's thread. A disable's flushes are made by the gate's flusher, off the
# caller's thread; the probe counts the caller's own (the measured thread's, CFlushCounter) apart, gated at zero, and
# counts the total until `synchronize()` returned (so the budgets above still hold the whole). Before item 1: 2 (1 of a
# directory) on the caller's thread for a disable, 3 (2) behind a busy lock, and 112 ms waited there. A consent
# refusal likewise since: its call (made on the consent manager's executor, so counted as the process's flushes until
# it returned, while another holder keeps the lock and the flusher cannot run) writes an unflushed intent; 2 before.
CALLER_FLUSH_BUDGETS = [
    # (benchmark, budget: flushes on the caller's thread; before item 1)
    ("Device.disable", 0, 2),
    ("Device.disable.busyLock", 0, 3),
    # A denial's call, made while another holder keeps the lock: the process's flushes before it returned.
    ("Device.consent.deny", 0, 2),
]

# Issue 47, item 5: launch allocations, as the issue measures them: a fresh process to its first isEnabled with the
# gate and the consent manager over a data directory (Benchmarks/LaunchProbes/Launch), against a fresh process that
# reads one small JSON file with Foundation and one value from it (LaunchProbes/JSON). Each probe counts its own
# allocations (CMallocCounter: malloc and its siblings defined in the executable) and prints those its main thread
# made up to the answer: the same count every run, whatever the machine. valgrind's whole-process count, used before,
# also took in what the consent manager's check of the checkpoint (a task of utility priority, started at launch)
# had done by the exit: 585 here, 634 on CI, for the same binary. That check's cost is reported (the process's
# allocations once it has finished), not gated. Measured: 562 before the launch path was trimmed (no decoder built
# for the ledger's empty last line, no error built for a missing intents folder, no URL built for the checkpoint or
# the temporaries' directory, each file's location worked out once, the store's name built only for a diagnostic,
# no set built for the policy's decisions, no task-local bound for a lock not taken, the JSON reader's objects given
# room at once), 432 after, against 216 for the baseline: 2.00 x, the goal. Issue 47's flusher cost 8 more (440); its
# bookkeeping moved under the manager's lock and the file ledger found by its type, not by a protocol's conformance,
# brought it to 429 (1.99 x). The ceiling is that count with a small margin.
LAUNCH_MALLOC_CEILING = 450
LAUNCH_RATIO_GOAL = 2

# Issue 47, item 4: binary size per module (gated). Each probe (Benchmarks/SizeProbes) is a tiny program calling one
# isEnabled, built in release and stripped (ELF x86-64 here); a module's size is its probe's minus the probe of what
# it depends on. Budgets in KB (1,024 bytes): about 100 KB above the size in the run that set them, so a change that
# adds 100 KB fails. Goals (reported): the issue asks FeatureGate to get to 1,000 KB (from 1,432), the others not to grow.
SIZE_PROBES = ["None", "FeatureGate", "FeatureGateConfig", "NoopRuntime", "FeatureGateIAB", "FeatureGateRemote",
               "FeatureGateStack"]
SIZE_MODULES = [
    # (module, probe, the probes subtracted from it, added back, budget in KB, goal in KB or None)
    # Measured: 1,444 before issue 47, 1,459 after its JSON reader (the decoders it replaced stay linked for the
    # intents and the remote layer), 490, 491, 388, 147 and 8 for the others.
    # Issue 47's smaller binary: FeatureGate 1,525 KB before it (main at b0d7d64; Config 502, NoopRuntime 542, IAB 388,
    # Remote 151, Stack 8), 1,464 after (−61 KB; the others 502, 542, 388, 147 and 8): one sort for the module (−36),
    # a Set<String> for the one Set<Data> (−16), JSONValue not Equatable (−8), package records Equatable, not Hashable
    # (−13). The directory walk compiled once saved 29 KB more, but returning its lock in a struct put the lock on the
    # heap: 6 more allocations at launch, over 2 x the JSON baseline; it was taken back. Even the whole module built
    # -Osize is 1,290 KB. Item 1 (the flusher, the watch of the intents' folder) +65 KB, the start's replay under the
    # lock +8 KB, three closures made values -12 KB: 1,525 KB at stop 52. Then item 1 for consent refusals +23 KB, and
    # the size work of the branch that had waited (the directory walk compiled once, its lock kept in the caller's
    # frame; removeTemporaries' wait as a value; hand-written Codable over one shared key type; the lock's work out of
    # line: -89 KB, launch allocations unchanged): 1,459 KB, the budget 20 KB above.
    ("FeatureGate", "FeatureGate", ["None"], [], 1_480, 1_000),
    ("FeatureGateConfig", "FeatureGateConfig", ["FeatureGate"], [], 600, 490),
    ("NoopRuntime", "NoopRuntime", ["FeatureGate"], [], 640, 487),
    ("FeatureGateIAB", "FeatureGateIAB", ["FeatureGate"], [], 490, 384),
    ("FeatureGateRemote", "FeatureGateRemote", ["NoopRuntime"], [], 250, None),
    ("FeatureGateStack", "FeatureGateStack", ["FeatureGateConfig", "NoopRuntime"], ["FeatureGate"], 110, 12),
]

# Exported metric names (spaces become underscores) and the short names used below.
METRICS = {"wallClock": "time", "mallocCountTotal": "mallocs", "mallocBytesCount": "mallocBytes",
           "Toggler_flips": "flips", "Reader_overlap_pct": "overlap", "Flushes": "flushes",
           "Directory_flushes": "directoryFlushes", "Caller_flushes": "callerFlushes"}
# A contended result counts only if its two readers ran at the same time for most of the sample (median, percent);
# on a busy machine they can end up taking turns on one core, and then nothing contends.
MIN_OVERLAP = 80
PER_CALL_SUFFIX = "_ps_per_call"  # custom metrics in picoseconds per call, one table row each


def harness(*arguments, check=True):
    """Runs `swift package ... benchmark <arguments>` in the benchmark package and returns its exit status."""
    command = ["swift", "package", "--allow-writing-to-package-directory", "benchmark", *arguments]
    print("$ " + " ".join(command), flush=True)
    status = subprocess.run(command, cwd=PACKAGE).returncode
    if check and status != 0:
        sys.exit(f"report.py: the benchmark harness failed (exit status {status})")
    return status


def calls_per_sample():
    """Reads how many calls each benchmark makes per sample (its scaling factor) from the stored baseline."""
    results = json.loads((PACKAGE / ".benchmarkBaselines" / TARGET / BASELINE / "results.json").read_text())["results"]
    calls = {}
    for key, metric_results in zip(results[::2], results[1::2]):
        calls[key["name"]] = metric_results[0]["scalingFactor"]
    return calls


def samples():
    """Reads the exported samples: {benchmark: {metric: [raw value per sample]}}, with METRICS' short names."""
    pattern = re.compile(rf"^{BASELINE}\.{TARGET}\.(.+)\.([^.]+)\.histogram\.samples\.tsv$")
    found = {}
    for path in EXPORT.iterdir():
        match = pattern.match(path.name)
        if not match:
            continue
        lines = path.read_text().splitlines()
        header, values = lines[0], [int(line) for line in lines[1:] if line.strip()]
        # Every metric is configured with raw units (ns, counts); a scaled unit would make "zero" approximate.
        if re.search(r"\((K|M|G|T|P|μs|ms|s)\)", header):
            sys.exit(f"report.py: {path.name} is not in raw units ({header!r})")
        metric = METRICS.get(match.group(2), match.group(2))
        found.setdefault(match.group(1), {})[metric] = values
    return found


def budgeted_benchmarks():
    """The benchmarks with a zero-allocation budget: those with a thresholds file saying mallocCountTotal is 0."""
    budgeted = []
    for path in sorted(THRESHOLDS.glob(f"{TARGET}.*.p90.json")):
        if json.loads(path.read_text()).get("mallocCountTotal") == 0:
            budgeted.append(path.name[len(TARGET) + 1 : -len(".p90.json")])
    return budgeted


def nanoseconds(value):
    return f"{value:.2f}" if value < 10 else f"{value:,.0f}"


def run_once():
    """Runs every benchmark once into the baseline, has the harness check it, and exports its samples. Returns the
    exit status of the harness's thresholds check."""
    for stale in EXPORT.glob("*.tsv") if EXPORT.exists() else []:
        stale.unlink()
    EXPORT.mkdir(parents=True, exist_ok=True)
    harness("baseline", "update", BASELINE, "--no-progress")
    status = harness("thresholds", "check", BASELINE, "--no-progress", check=False)
    harness("baseline", "read", BASELINE, "--format", "histogramSamples", "--path", str(EXPORT), "--no-progress")
    return status


def probe_sizes():
    """Builds every size probe in release and returns {probe: stripped size in bytes}."""
    sizes = {}
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=PACKAGE, check=True,
                              capture_output=True, text=True).stdout.strip()
    for probe in SIZE_PROBES:
        product = f"size-probe-{probe}"
        command = ["swift", "build", "-c", "release", "--product", product]
        print("$ " + " ".join(command), flush=True)
        if subprocess.run(command, cwd=PACKAGE).returncode != 0:
            sys.exit(f"report.py: building {product} failed")
        stripped = EXPORT / f"{product}.stripped"
        subprocess.run(["strip", "-o", str(stripped), str(Path(bin_path) / product)], check=True)
        sizes[probe] = stripped.stat().st_size
    return sizes


def report_sizes(failures):
    """Prints each module's stripped size against its budget; appends what broke to `failures`."""
    sizes = probe_sizes()
    print("\n## Binary size per module (gated; release, stripped, one isEnabled call)\n")
    print("| module | size (KB) | budget (KB) | | goal (KB) | |")
    print("|---|---:|---:|---|---:|---|")
    for module, probe, minus, plus, budget, goal in SIZE_MODULES:
        size = (sizes[probe] - sum(sizes[other] for other in minus) + sum(sizes[other] for other in plus)) / 1024
        holds = size <= budget
        if not holds:
            failures.append(f"{module}: {size:,.0f} KB stripped, budget {budget:,} KB")
        met = "—" if goal is None else ("met" if size <= goal else "not yet")
        print(f"| {module} | {size:,.0f} | {budget:,} | {'holds' if holds else 'BROKEN'} | "
              f"{'—' if goal is None else f'{goal:,}'} | {met} |")
    print(f"| (the probe without FeatureGate) | {sizes['None'] / 1024:,.0f} | | |")


def worst_within(failures, name, metric, values, ceiling):
    """The most `metric` in any sample of `name`, or None when it did not run; appends to `failures` when that is
    missing or above `ceiling`."""
    if not values:
        failures.append(f"{name}: has a {metric} ceiling but did not run")
        return None
    worst = max(values)
    if worst > ceiling:
        failures.append(f"{name}: {worst:,} {metric} in one sample, ceiling {ceiling:,}")
    return worst


def report_device_costs(data, failures):
    """Prints flushes per operation and the callers' times; appends what broke to `failures`."""
    print("\n## Flushes per operation (gated: the most in any sample; time: the caller's, reported)\n")
    print("| operation | flushes (median) | of them directories | most in a sample | budget | before | "
          "median ms | max ms | |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---|")
    for name, budget, directories, before, directories_before in FLUSH_BUDGETS:
        series = data.get(name, {})
        flushes, times = series.get("flushes", []), series.get("time", [])
        worst = worst_within(failures, name, "flushes", flushes, budget)
        worst_directories = worst_within(
            failures, name, "directory flushes", series.get("directoryFlushes", []), directories)
        if worst is None or worst_directories is None:
            continue
        holds = worst <= budget and worst_directories <= directories
        print(f"| `{name}` | {statistics.median(flushes):g} | "
              f"{statistics.median(series.get('directoryFlushes', [0])):g} | {worst} ({worst_directories}) | "
              f"{budget} ({directories}) | {before} ({directories_before}) | {statistics.median(times) / 1e6:.2f} | "
              f"{max(times) / 1e6:.2f} | {'holds' if holds else 'BROKEN'} |")
    print("\n| operation | flushes on the caller's thread (most in a sample) | budget | before item 1 | |")
    print("|---|---:|---:|---:|---|")
    for name, budget, before in CALLER_FLUSH_BUDGETS:
        worst = worst_within(failures, name, "flushes on the caller's thread",
                             data.get(name, {}).get("callerFlushes", []), budget)
        if worst is not None:
            print(f"| `{name}` | {worst} | {budget} | {before} | {'holds' if worst <= budget else 'BROKEN'} |")



def probe_counts(*command):
    """Runs a launch probe and returns the numbers it printed after its answer."""
    run = subprocess.run(list(command), capture_output=True, text=True)
    fields = run.stdout.split()
    if run.returncode != 0 or len(fields) < 3 or fields[0] != "true":
        sys.exit(f"report.py: {' '.join(command)} failed (exit status {run.returncode}):\n{run.stdout}{run.stderr}")
    return [int(field) for field in fields[1:]]


def report_launch(failures):
    """Counts the launch probe's allocations and its JSON baseline's; appends what broke to `failures`."""
    bin_path = Path(subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=PACKAGE, check=True,
                                   capture_output=True, text=True).stdout.strip())
    for product in ("launch-probe", "launch-probe-json"):
        command = ["swift", "build", "-c", "release", "--product", product]
        print("$ " + " ".join(command), flush=True)
        if subprocess.run(command, cwd=PACKAGE).returncode != 0:
            sys.exit(f"report.py: building {product} failed")
    with tempfile.TemporaryDirectory() as scratch:
        directory, small = Path(scratch) / "data", Path(scratch) / "small.json"
        small.write_text('{"enabled":true,"name":"analytics","version":2}')
        subprocess.run([str(bin_path / "launch-probe"), str(directory), "prepare"], check=True, capture_output=True)
        launch, _, verified = probe_counts(str(bin_path / "launch-probe"), str(directory))
        baseline, _ = probe_counts(str(bin_path / "launch-probe-json"), str(small))
    ratio = launch / baseline
    if launch > LAUNCH_MALLOC_CEILING:
        failures.append(f"launch: {launch:,} allocations, ceiling {LAUNCH_MALLOC_CEILING:,}")
    print("\n## Launch allocations (a fresh process's main thread to the first isEnabled; gated: the ceiling)\n")
    print("| launch (gate and consent) | JSON baseline | ratio | goal | ceiling | | process, checkpoint checked |")
    print("|---:|---:|---:|---:|---:|---|---:|")
    print(f"| {launch:,} | {baseline:,} | {ratio:.2f} | <= {LAUNCH_RATIO_GOAL} "
          f"({'met' if ratio <= LAUNCH_RATIO_GOAL else 'not yet'}) | {LAUNCH_MALLOC_CEILING:,} | "
          f"{'holds' if launch <= LAUNCH_MALLOC_CEILING else 'BROKEN'} | {verified:,} |")


def main():
    harness_check = run_once()
    calls = calls_per_sample()
    data = samples()
    budgeted = budgeted_benchmarks()
    failures = []
    if harness_check != 0:
        failures.append(f"the harness's thresholds check failed (exit status {harness_check})")

    median_per_call = {}  # benchmark, or (benchmark, per-call metric) -> median ns per call
    print("\n## Per call (medians over samples)\n")
    print("| benchmark | calls/sample | median ns/call | p90 ns/call | mallocs/call | max mallocs in a sample "
          "| toggler flips/ms | readers overlapped | allocation budget |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in sorted(data):
        series, n = data[name], calls[name]
        mallocs = series.get("mallocs", [])
        worst = max(mallocs, default=0)
        flips = "—"
        if "flips" in series:
            flips = f"{sum(series['flips']) / (sum(series['time']) / 1e6):.1f}"
        overlap = f"{statistics.median(series['overlap']):.0f}%" if "overlap" in series else "—"
        budget = "—"
        if name in budgeted:
            budget = "0: holds" if worst == 0 else f"0: BROKEN ({worst} in one sample)"
            if worst != 0:
                failures.append(f"{name}: {worst} mallocs in one sample, budget 0")

        # A paired benchmark times each side itself (picoseconds per call); any other, per sample. The harness counts
        # a paired sample's mallocs for both sides together, so those are shown per pair of calls.
        sides = sorted((f"{name}: {metric[: -len(PER_CALL_SUFFIX)]}", (name, metric), sorted(values), 1_000)
                       for metric, values in series.items() if metric.endswith(PER_CALL_SUFFIX))
        if not sides:
            sides = [(name, name, sorted(series["time"]), n)]
        for label, key, values, divisor in sides:
            median = statistics.median(values) / divisor
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))] / divisor
            median_per_call[key] = median
            per_call = f"{statistics.median(mallocs) / n if mallocs else 0:g}"
            if len(sides) > 1:
                per_call += " per pair"
            print(f"| `{label}` | {n:,} | {nanoseconds(median)} | {nanoseconds(p90)} | {per_call} | {worst} "
                  f"| {flips} | {overlap} | {budget} |")

    canary = data.get(CANARY, {}).get("mallocs", [])
    if not canary or min(canary) < calls.get(CANARY, 0):
        failures.append(f"{CANARY}: counted {min(canary, default=0)} mallocs in a sample of {calls.get(CANARY)} "
                        "calls that each allocate once: the harness is not counting allocations")
    for name in budgeted:
        if name not in data:
            failures.append(f"{name}: has an allocation budget but did not run")

    print("\n## Allocation ceilings (gated; the most in any sample)\n")
    print("| benchmark | metric | most in a sample | ceiling | protects | |")
    print("|---|---|---:|---:|---|---|")
    for name, metric, ceiling, protects in ALLOCATION_CEILINGS:
        worst = worst_within(failures, name, metric, data.get(name, {}).get(metric, []), ceiling)
        if worst is None:
            continue
        print(f"| `{name}` | {metric} | {worst:,} | {ceiling:,} | {protects} | "
              f"{'holds' if worst <= ceiling else 'BROKEN'} |")

    report_device_costs(data, failures)
    report_sizes(failures)
    report_launch(failures)

    print("\n## Ratios (one run; medians of the per-call times above, or of per-sample ratios when paired)\n")
    print("| ratio | measured | budget | |")
    print("|---|---:|---:|---|")
    for what, numerator, denominator, relation, bound in RATIO_BUDGETS:
        ratio = None
        if denominator is None:
            name, metric = numerator.split("/")
            if metric in data.get(name, {}):
                ratio = statistics.median(data[name][metric]) / 1_000
        elif numerator in median_per_call and denominator in median_per_call:
            ratio = median_per_call[numerator] / median_per_call[denominator]
        if ratio is None:
            print(f"| {what} | not run | {relation} {bound} | |")
            continue
        holds = ratio <= bound if relation == "<=" else ratio >= bound
        verdict = "holds" if holds else "MISSED"
        sides = [side for side in (numerator, denominator) if side is not None]
        names = [side if isinstance(side, str) else side[0] for side in sides]
        overlaps = [statistics.median(data[name.split("/")[0]]["overlap"])
                    for name in names if "overlap" in data.get(name.split("/")[0], {})]
        if overlaps and min(overlaps) < MIN_OVERLAP:
            verdict = (f"inconclusive: the readers overlapped only {min(overlaps):.0f}% of the time "
                       "(the machine was busy), so this run measured no contention")
        print(f"| {what} | {ratio:.2f} | {relation} {bound} | {verdict} |")

    print()
    if failures:
        print("Budgets broken:\n  " + "\n  ".join(failures))
        return 1
    print(f"Allocation budgets hold: {', '.join(budgeted)} (zero mallocs in every sample); "
          f"{', '.join(f'{name} {metric}' for name, metric, _, _ in ALLOCATION_CEILINGS)} within their ceilings.")
    print("Ratios are reported, not gated.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
