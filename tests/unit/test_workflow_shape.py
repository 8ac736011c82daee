"""One path from config to package, held for every rule: a rule passes its settings as one
``settings`` param (a plain dict of the job's frozen settings object) and its script receives
them with :func:`perfcast.rulekit.rule_settings` and hands them whole to the package.

Read from the rule files themselves (``workflow/rules/*.smk``) and the scripts they name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RULES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
_RULE = re.compile(r"^(?:rule|checkpoint) (\w+):\n((?:(?:    .*)?\n)+)", re.MULTILINE)
_DIRECTIVE = re.compile(r"^    (\w+):(.*)$")


def _blocks() -> dict[str, dict[str, list[str]]]:
    """rule -> directive -> its lines (the directive's own line's rest, then its body)."""
    rules = {}
    for path in RULES:
        for m in _RULE.finditer(path.read_text()):
            directives: dict[str, list[str]] = {}
            current = None
            for line in m.group(2).splitlines():
                d = _DIRECTIVE.match(line)
                if d:
                    current = d.group(1)
                    directives[current] = [d.group(2).strip()] if d.group(2).strip() else []
                elif current and line.strip():
                    directives[current].append(line.strip())
            rules[m.group(1)] = directives
    return rules


BLOCKS = _blocks()


def test_the_rule_files_were_read():
    assert len(BLOCKS) >= 25 and {"counters_collect", "model_train", "warmup_run",
                                  "sensitivity_profile"} <= set(BLOCKS)


@pytest.mark.parametrize("rule", sorted(r for r, d in BLOCKS.items() if "params" in d))
def test_a_rule_passes_one_settings_param(rule):
    keys = [re.match(r"(\w+)\s*=", line).group(1) for line in BLOCKS[rule]["params"]
            if re.match(r"\w+\s*=", line)]
    assert keys == ["settings"], f"rule {rule}: params {keys}, expected settings only"


@pytest.mark.parametrize("rule", sorted(r for r, d in BLOCKS.items() if "script" in d))
def test_a_script_receives_its_settings_one_way(rule):
    directives = BLOCKS[rule]
    script = re.search(r'"([^"]+\.py)"', " ".join(directives["script"])).group(1)
    text = (REPO / "workflow" / "rules" / script).resolve().read_text()
    if "params" in directives:
        assert "rule_settings(snakemake" in text, f"{script}: settings not via rule_settings"
    assert "snakemake.params." not in text, f"{script} reads a param by hand"


def test_every_rule_the_cluster_profile_names_exists():
    """profiles/slurm names rules (groups, per-rule resources and threads): a renamed rule would
    silently fall out of its group or lose its node of its own."""
    import yaml

    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    named = {*profile["groups"], *profile.get("set-resources", {}),
             *profile.get("set-threads", {})}
    assert named and not named - set(BLOCKS), sorted(named - set(BLOCKS))
