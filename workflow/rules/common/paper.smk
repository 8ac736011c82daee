# Paper-artifact targets (rules: ../paper.smk): each stage's <stage>_paper_targets(), defined in
# common/<stage>.smk, which the Snakefile includes before this file.


def paper_targets(network=True):
    """Everything under results/paper/ (none if paper.enabled is false). network=False leaves
    out what needs a download: `all` runs offline, `snakemake paper` fetches."""
    if not config["paper"]["enabled"]:
        return []
    return sorted(
        model_paper_targets()
        + warmup_paper_targets()
        + sensitivity_paper_targets(network=network)
        + sweep_paper_targets()
    )
