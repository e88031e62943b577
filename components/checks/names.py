"""The names a landscape's names become (namespaces, technical IDs, cluster and Pulumi names), checked before use.

arbor derives a project's namespace `garden-<project>`, a shoot's technical ID and seed namespace
`shoot--<project>--<shoot>`, and its resource and cluster names `shoot-<project>-<shoot>` (components/naming.py,
components/layers/landscape.py). Each must be valid for the API that gets it and unique, so each is checked at the
name that causes it: Gardener's limits where arbor's names are Gardener's, and uniqueness where a name joins others.
"""

from __future__ import annotations

from components import naming
from components.spec.landscape import LandscapeSpec

# Gardener's ValidateProject: a project name has at most 10 characters and no `--`.
PROJECT_NAME_MAX = 10
# Gardener's shoot validator: project and shoot name together at most 21 characters, so that the technical ID
# `shoot--<project>--<shoot>` (at most 30) fits the clouds' name limits and every label and name made from it.
PROJECT_AND_SHOOT_MAX = 21


def _hyphens(at: str, name: str) -> list[str]:
    """Gardener's rule: `--` separates the parts of a technical ID, so no name has one."""
    if "--" not in name:
        return []
    return [f"{at}: '{name}' has '--', which separates the parts of technical IDs (shoot--<project>--<shoot>): "
            "use single hyphens"]  # fmt: skip


def _project_lines(spec: LandscapeSpec) -> list[str]:
    """Each project's name as Gardener limits it (it names the namespace `garden-<project>` and technical IDs)."""
    lines = []
    for i, project in enumerate(spec.garden.projects):
        at = f"landscape.garden.projects[{i}].name"
        if len(project.name) > PROJECT_NAME_MAX:
            lines.append(
                f"{at}: '{project.name}' has {len(project.name)} characters, more than {PROJECT_NAME_MAX} "
                "(Gardener's limit for project names, which name namespaces and technical IDs): shorten it"
            )
        lines += _hyphens(at, project.name)
    return lines


def derived_names(project: str, shoot: str) -> dict[str, str]:
    """The names a shoot's project and name become, by what they name."""
    return {
        "namespace": naming.shoot_namespace(project, shoot),
        # The Shoot component's name without the stack's prefix, and the local cluster's without the stack's.
        "resource and cluster name": f"shoot-{project}-{shoot}",
    }


def name_checks(spec: LandscapeSpec) -> list[str]:
    """Every derived name valid (Gardener's limits) and unique, reported at the shoot or project name causing it."""
    lines = _project_lines(spec)
    taken: dict[tuple[str, str], int] = {}
    for i, shoot in enumerate(spec.shoots):
        at = f"landscape.shoots[{i}].name"
        lines += _hyphens(at, shoot.name)
        both = len(shoot.project) + len(shoot.name)
        if both > PROJECT_AND_SHOOT_MAX:
            lines.append(
                f"{at}: project '{shoot.project}' and shoot '{shoot.name}' have {both} characters together, more "
                f"than {PROJECT_AND_SHOOT_MAX} (Gardener's limit, so the technical ID fits every name and label made "
                "from it): shorten one"
            )
        for what, name in derived_names(shoot.project, shoot.name).items():
            first = taken.setdefault((what, name), i)
            other = spec.shoots[first]
            if first != i and (other.project, other.name) != (shoot.project, shoot.name):
                lines.append(
                    f"{at}: '{shoot.name}' in project '{shoot.project}' gives {what} '{name}', the same as "
                    f"shoots[{first}] ('{other.name}' in project '{other.project}'); rename one"
                )
    return lines + _bucket_lines(spec)


def _bucket_lines(spec: LandscapeSpec) -> list[str]:
    """A bucket holds one seed's backups: two seeds naming the same bucket would mix their shoots' entries."""
    lines: list[str] = []
    named: dict[str, int] = {}
    for i, seed in enumerate(spec.seeds):
        if seed.backup is None:
            continue
        if seed.backup.bucket is None:
            if "google" in seed.name:
                # Cloud Storage refuses any bucket name with it; the default arbor-<seed>-<hash> would carry it.
                lines.append(
                    f"landscape.seeds[{i}].backup.bucket: the default name arbor-{seed.name}-<hash> holds 'google', "
                    "which bucket names may not: name the bucket"
                )
            continue
        first = named.setdefault(seed.backup.bucket, i)
        if first != i:
            lines.append(
                f"landscape.seeds[{i}].backup.bucket: '{seed.backup.bucket}' is seeds[{first}]'s bucket already "
                "(a bucket holds one seed's backups): name another"
            )
    return lines
