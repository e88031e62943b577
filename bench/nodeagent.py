"""Node bootstrap figures: user-data bytes per provider, and unit restarts per change scenario.

Restarts are compared with a baseline that restarts every unit on any change (the old downloader's behaviour).
Usage: .venv/bin/python bench/nodeagent.py   (prints Markdown tables; bench/README.md keeps the result)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.plan import bootstrap, osc
from components.render import nodeagent
from tests.unit.test_nodeagent import BASE, SCENARIOS


def main() -> None:
    """Prints both tables."""
    data = bootstrap.user_data(bootstrap.provision_osc(BASE))
    print("| provider | user data bytes | budget |\n|---|---:|---:|")
    for provider, budget in bootstrap.USER_DATA_BUDGET.items():
        print(f"| {provider} | {len(data.encode())} | {budget} |")
    units = len(nodeagent.reconcile_osc(BASE).units)
    print("\n| change | arbor: units restarted | baseline: units restarted | pool rolls |\n|---|---:|---:|---|")
    total = baseline = 0
    for case, new, _, rolls in SCENARIOS:
        if rolls:
            print(f"| {case} | 0 (machines replaced) | {units} | yes |")
            continue
        plan = osc.plan_between(nodeagent.reconcile_osc(BASE), nodeagent.reconcile_osc(new))
        changed = nodeagent.reconcile_osc(new) != nodeagent.reconcile_osc(BASE)
        total += len(plan.restart)
        baseline += units if changed else 0
        print(f"| {case} | {len(plan.restart)} ({', '.join(plan.restart) or '-'}) | {units if changed else 0} | no |")
    print(f"\nIn-place scenarios: {total} unit restarts with arbor, {baseline} with the baseline.")


if __name__ == "__main__":
    main()
