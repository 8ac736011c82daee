# Paper-artifact targets (rules: ../paper.smk).
P = config.get("paper") or {}


def _stage_paper_targets(stage):
    fn = globals().get(f"{stage}_paper_targets")
    return fn() if fn else []


def model_paper_targets():
    if not model_enabled():
        return []
    return [f"{RESULTS}/paper/ipc_prediction.{ext}" for ext in ("csv", "md", "png")]


def paper_targets():
    """Everything under results/paper/ (part of `all` unless paper.enabled is false)."""
    if not P.get("enabled", True):
        return []
    return sorted(
        model_paper_targets()
        + _stage_paper_targets("warmup")
        + _stage_paper_targets("sensitivity")
        + _stage_paper_targets("sweep")
    )

