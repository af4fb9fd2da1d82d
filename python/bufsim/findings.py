"""Findings: what a paper states, what bufsim measured, and whether the two agree.

Every `bufsim reproduce` ends with one line per finding the paper states in its text or
tables, `finding | paper | bufsim | agrees or differs`; `--json` prints the same list as
objects with the keys `finding`, `paper`, `bufsim` and `agrees`. A finding is judged by a
rule written next to it (an equality, an ordering, a bound), never by eye, so a reproduction
that drifts flips to `differs` and docs/reproductions.md must explain it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    finding: str  # the claim, in the paper's terms
    paper: str  # what the paper reports for it
    bufsim: str  # what bufsim measured, in the same terms
    agrees: bool

    def as_dict(self) -> dict:
        return {"finding": self.finding, "paper": self.paper, "bufsim": self.bufsim, "agrees": self.agrees}


def equal(finding: str, paper: object, bufsim: object) -> Finding:
    """A number the paper prints, which bufsim must reproduce exactly."""
    return Finding(finding, str(paper), str(bufsim), paper == bufsim)


def within(finding: str, paper: float, bufsim: float, tolerance: float, unit: str = "") -> Finding:
    """A number bufsim must reproduce within a relative `tolerance` (0.1 is 10%)."""
    ok = abs(bufsim - paper) <= tolerance * abs(paper)
    return Finding(
        finding, f"{paper:g}{unit}", f"{bufsim:g}{unit} (within {tolerance:.0%}: {'yes' if ok else 'no'})", ok
    )


def format_findings(findings: list[Finding]) -> str:
    """`finding | paper | bufsim | agrees`, one line per finding, then the count that agree."""
    rows = [["finding", "paper", "bufsim", "agrees"]]
    rows += [[f.finding, f.paper, f.bufsim, "agrees" if f.agrees else "differs"] for f in findings]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    agree = sum(f.agrees for f in findings)
    lines.append(f"{agree} of {len(findings)} findings agree")
    return "\n".join(lines)
