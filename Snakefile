# perfcast: performance measurements in, models a performance engineer can trust out.
#
#   snakemake --cores 2                      whole DAG on config/config.yaml (the embedded default)
#   snakemake --cores 2 --configfile my.yaml  a config of your own, merged over the default
#                                             (add --replace-workflow-config to drop the default)
#   snakemake --cores 2 paper                results/paper/ in full: adds the replay of the paper's
#                                             measurements (downloads them; see sensitivity.replay)
#   snakemake --report results/report.html    every stage's figures and tables
from snakemake.utils import min_version

from perfcast.settings import validate

min_version("9.20")


configfile: "config/config.yaml"


# the one validation: every section against its schema (src/perfcast/schemas/config.schema.yaml and
# the section schemas it references), every default filled in. perfcast.settings.validate is
# snakemake.utils.validate's check, but it also fills the defaults of referenced schemas; the
# command line validates through the same function.
config.update(validate(config, "config", where="config"))


report: "workflow/report/workflow.rst"


# every include is here: shared helpers, then each stage's functions (targets, input functions,
# settings), then each stage's rules
include: "workflow/rules/common.smk"
include: "workflow/rules/common/counters.smk"
include: "workflow/rules/common/model.smk"
include: "workflow/rules/common/warmup.smk"
include: "workflow/rules/common/sensitivity.smk"
include: "workflow/rules/common/sweep.smk"
include: "workflow/rules/common/paper.smk"
include: "workflow/rules/common/summary.smk"
include: "workflow/rules/counters.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/warmup.smk"
include: "workflow/rules/sensitivity.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/summary.smk"


rule all:
    default_target: True
    input:
        counters_targets(),
        model_targets(),
        warmup_targets(),
        sensitivity_targets(),
        sweep_targets(),
        paper_targets(network=False),  # the replay's download is left to `snakemake paper`
        summary_targets(),


# the run's last words: its summary (rule run_summary; the latest one, also after a rerun with
# nothing to do), so that a missed target or a skipped stage is the first thing a user reads
onsuccess:
    from pathlib import Path

    summary_md = Path(RESULTS) / "summary.md"
    if summary_md.exists():
        print(f"\n{summary_md}:\n\n{summary_md.read_text()}")
