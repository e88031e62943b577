"""The spec fuzzer: generated landscapes through `checks.check`, counting crashes and unclear refusal lines.

Each landscape comes from tests/unit/landscape_fuzz.py (spec_cases' base, valid variations and mutations) and is
judged by its property: accepted and registered under Pulumi mocks with unique URNs and valid names, or refused
with `landscape<path>: <reason>` lines. Registration under mocks is slow (most of a second a landscape), so only one
accepted landscape in --register-every is registered. Usage (from the project root, or `make fuzz`):
  .venv/bin/python bench/fuzz.py [--examples 10000] [--seed 14] [--register-every 50] [--readme]
Crashes, with their landscape, go to out/fuzz-crashes.txt.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import platform
import re
import resource
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

# arbor is a program, not a package: components/ and tests/ import from the project root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, Phase, given, seed, settings
from scale import write_readme

from tests.unit.landscape_fuzz import Verdict, judge, landscapes

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Spec fuzzing (`bench/fuzz.py`)"
CRASHES = ROOT / "out" / "fuzz-crashes.txt"
# A landscape that takes longer than this, or more memory, counts as a crash: the bounds should have refused it.
TIMEOUT_S = 30
MEMORY_BYTES = 8 * 2**30
SHOWN = 8
FRAME = re.compile(r'File ".*/components/([^"]+)", line ([0-9]+), in (\S+)')


class TimedOutError(Exception):
    """A landscape took longer than TIMEOUT_S."""


def _alarm(_: int, __: FrameType | None) -> None:
    raise TimedOutError(f"longer than {TIMEOUT_S} s")


@dataclass
class Tally:
    """What the run found: outcomes, crashes by their last line, unclear and unpathed lines, registrations."""

    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    crashes: collections.Counter[str] = field(default_factory=collections.Counter)
    unclear: collections.Counter[str] = field(default_factory=collections.Counter)
    unpathed: collections.Counter[str] = field(default_factory=collections.Counter)
    unclear_landscapes: int = 0
    registered: int = 0
    registration_seconds: float = 0.0
    registration_problems: collections.Counter[str] = field(default_factory=collections.Counter)

    def add(self, raw: Any, verdict: Verdict, registered: bool) -> None:
        """Counts one verdict; a crash's landscape and traceback are appended to out/fuzz-crashes.txt."""
        self.outcomes[verdict.outcome] += 1
        self.registered += registered and verdict.outcome == "accepted"
        if verdict.outcome == "crash":
            trace = verdict.problems[0].strip().splitlines()
            # Where in arbor it broke: the innermost frame in components/.
            frames = [m for line in trace if (m := FRAME.search(line))]
            where = f" (components/{frames[-1][1]}:{frames[-1][2]} `{frames[-1][3]}`)" if frames else ""
            self.crashes[trace[-1][:200] + where] += 1
            with CRASHES.open("a") as out:
                out.write(f"--- {trace[-1][:200]}\n{_printable(raw)}\n{verdict.problems[0]}\n")
        elif verdict.outcome == "accepted":
            self.registration_problems.update(p[:200] for p in verdict.problems)
        # A reason's refused value varies; the path and the first words say which message it is.
        self.unclear.update(_shape(line) for line in verdict.unclear)
        self.unpathed.update(_shape(line) for line in verdict.unpathed)
        self.unclear_landscapes += bool(verdict.unclear)


def _printable(raw: Any) -> str:
    """The landscape as Python writes it, at most 4000 characters (an int of over 4300 digits has no repr)."""
    try:
        return repr(raw)[:4000]
    except ValueError:
        return "(a landscape with an integer too long to print)"


def _shape(line: str) -> str:
    """A line shortened to what identifies its message: indices dropped, at most 120 characters."""
    return "".join(c for c in line if not c.isdigit())[:120]


def run(examples: int, seed_value: int, register_every: int, judged: Any = judge) -> tuple[Tally, float]:
    """Judges `examples` generated landscapes; every `register_every`-th accepted one is registered too."""
    tally = Tally()
    accepted = [0]

    @seed(seed_value)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(landscapes())
    def fuzz(raw: dict[str, Any]) -> None:
        verdict = judged(raw, register=False)
        register = verdict.outcome == "accepted" and accepted[0] % register_every == 0
        accepted[0] += verdict.outcome == "accepted"
        if register:
            started = time.perf_counter()
            verdict = judged(raw)
            tally.registration_seconds += time.perf_counter() - started
        tally.add(raw, verdict, register)
        done = sum(tally.outcomes.values())
        if done % 500 == 0:
            print(f"{done}: {dict(tally.outcomes)}", file=sys.stderr)

    started = time.perf_counter()
    fuzz()
    return tally, time.perf_counter() - started


def _guarded(fn: Any) -> Any:
    """`judge` with a time limit per landscape (a too-slow one is a crash)."""

    def guarded(raw: object, register: bool = True, run: Any = None) -> Verdict:
        signal.alarm(TIMEOUT_S)
        try:
            return fn(raw, register, run)  # type: ignore[no-any-return]
        except TimedOutError as err:
            return Verdict("crash", problems=[f"Timeout\n{err}"])
        finally:
            signal.alarm(0)

    return guarded


def report(tally: Tally, seconds: float, args: argparse.Namespace) -> tuple[str, str, str]:
    """The README section's intro, table and notes."""
    total = sum(tally.outcomes.values())
    crashes = tally.outcomes["crash"]
    each = tally.registration_seconds / max(tally.registered, 1)
    intro = (
        f"Measured {datetime.date.today().isoformat()} on this project's machine (2 cores, "
        f"{platform.python_implementation()} {platform.python_version()}): `make fuzz`, seed {args.seed}. Each "
        "landscape is generated from tests/unit/spec_cases.py's base (valid variations, then one to three mutations: "
        "wrong types, numbers out of range, odd strings with unicode, newlines or 100,000 characters, missing and "
        "unknown fields, copied entries, ranges near the edges of the address space) and judged by the property of "
        "tests/unit/test_fuzz_properties.py. Registration under mocks is slow (its time a landscape is below), so "
        f"only one accepted landscape in {args.register_every} is registered (URNs unique, names and labels valid "
        "for the API server); the others are checked only."
    )
    rows = [
        ("landscapes", f"{total}"),
        ("accepted", f"{tally.outcomes['accepted']} ({tally.registered} registered under mocks)"),
        ("registration under mocks", f"{tally.registration_seconds:.0f} s ({each:.1f} s a landscape)"),
        ("refused", f"{tally.outcomes['refused']}"),
        ("**crashes** (target 0)", f"**{crashes}**"),
        ("registration problems of accepted ones", f"{sum(tally.registration_problems.values())}"),
        ("refusal lines without a path and a reason", f"{sum(tally.unpathed.values())}"),
        (
            "unclear refusal lines (internal words)",
            f"{sum(tally.unclear.values())} in {tally.unclear_landscapes} landscapes",
        ),
        ("time, all told", f"{seconds:.0f} s ({seconds / max(total, 1) * 1000:.0f} ms a landscape)"),
    ]
    table = "| measure | value |\n|---|---:|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    notes = [
        "Unclear: a line with pydantic's wording or Python's types (`instance of`, `tuple`, `.[`, `input should`, "
        "`sys.`, in any case), which the spec messages' rewrite replaces."
    ]
    for title, counter in (
        ("Crashes", tally.crashes),
        ("Registration problems", tally.registration_problems),
        ("Unclear lines, most frequent", tally.unclear),
        ("Lines without a path", tally.unpathed),
    ):
        if counter:
            shown = "; ".join(f"`{line}` ({n})" for line, n in counter.most_common(SHOWN))
            notes.append(f"{title}: {shown}.")
    return intro, table, " ".join(notes)


def main() -> None:
    """Runs the fuzzer, prints the table, and writes it into bench/README.md with --readme."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--register-every", type=int, default=50, help="register one accepted landscape in N")
    parser.add_argument("--readme", action="store_true", help="write the table into bench/README.md")
    args = parser.parse_args()
    # A landscape that blows memory fails with MemoryError (a crash counted) rather than taking the machine down.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    signal.signal(signal.SIGALRM, _alarm)
    CRASHES.parent.mkdir(exist_ok=True)
    CRASHES.write_text("")
    tally, seconds = run(args.examples, args.seed, args.register_every, _guarded(judge))
    intro, table, notes = report(tally, seconds, args)
    print(f"{table}\n\n{notes}")
    if args.readme:
        write_readme(intro, table, notes, SECTION)


if __name__ == "__main__":
    main()
