# Paper-artifact targets (rules: ../paper.smk).
P = config.get("paper") or {}


def _stage_paper_targets(stage, **kwargs):
    fn = globals().get(f"{stage}_paper_targets")
    return fn(**kwargs) if fn else []


def model_paper_targets():
    if not model_enabled():
        return []
    return [f"{RESULTS}/paper/ipc_prediction.{ext}" for ext in ("csv", "md", "png")]


def paper_targets(network=True):
    """Everything under results/paper/ (none if paper.enabled is false). network=False leaves
    out what needs a download: `all` runs offline, `snakemake paper` fetches."""
    if not P.get("enabled", True):
        return []
    return sorted(
        model_paper_targets()
        + _stage_paper_targets("warmup")
        + _stage_paper_targets("sensitivity", network=network)
        + _stage_paper_targets("sweep")
    )

