"""Accessibility checks in the browser tests: axe-core (the npm package locked in
tests/browser_deps, installed by install.sh) injected into a Playwright page.

    from axe_helpers import assert_accessible
    assert_accessible(page, "play, mid-game, merde")

reports every violation axe finds (WCAG 2.0/2.1 A and AA and axe's best practices), with the
rule, its impact, a sample of the offending nodes and axe's help text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE_JS = Path(__file__).parent / "browser_deps" / "node_modules" / "axe-core" / "axe.min.js"

#: The rule sets axe runs: WCAG 2.0 and 2.1, levels A and AA, and axe's best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def axe_source() -> str:
    assert AXE_JS.is_file(), (
        f"no axe-core at {AXE_JS}: run ./install.sh (npm ci in tests/browser_deps)"
    )
    return AXE_JS.read_text(encoding="utf-8")


def axe_violations(page: Any, *, context: str | None = None) -> list[dict[str, Any]]:
    """Run axe-core on the page (or the elements `context` selects) and return its violations."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    result = page.evaluate(
        """async ([context, tags]) => {
            const r = await axe.run(context || document,
                {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => ({target: n.target, summary: n.failureSummary}))}));
        }""",
        [context, TAGS],
    )
    return list(result)


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']}")
        for n in v["nodes"]:
            summary = (n.get("summary") or "").replace("\n", " ")[:300]
            lines.append(f"    {n['target']}: {summary}")
    return "\n".join(lines)


def assert_accessible(page: Any, where: str, *, context: str | None = None) -> None:
    """Fail, listing every violation, unless axe finds none on the page."""
    violations = axe_violations(page, context=context)
    assert not violations, f"axe-core on {where}: {len(violations)} violations\n{describe(violations)}"
