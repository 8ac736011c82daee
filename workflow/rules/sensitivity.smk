# Stage 5: resource sensitivity (Wang et al. 2017; docs/methods/sensitivity.md). Per program:
# ceiling from a monitored unrestricted run, binary recursive sampling, the Cartesian product of
# the chosen levels measured under cgroup limits (or replayed), sequential 1-D PCHIP for the
# rest. Plus the replay evaluation on the paper's own measurements, written to results/paper/:
# the authors' raw data.zip is downloaded (a local rule: compute nodes often have no network),
# checked against its sha256 and converted into one table, unless replay.source names local
# copies.
# Functions: common/sensitivity.smk.
from snakemake.utils import validate

if stage_enabled("sensitivity"):

    validate(config["sensitivity"], "../schemas/sensitivity.schema.yaml")


include: "common/sensitivity.smk"


rule sensitivity_profile:
    input:
        data=_sens_profile_data,
    output:
        grid=f"{RESULTS}/sensitivity/{{sprog}}.parquet",
        runs=f"{RESULTS}/sensitivity/{{sprog}}.runs.parquet",
        summary=f"{RESULTS}/sensitivity/{{sprog}}.json",
    wildcard_constraints:
        sprog=SPROG,
    params:
        program=_sens_program,
        backend=SENS.get("backend"),
        epsilon=SENS.get("epsilon"),
        sampling=SENS.get("sampling"),
        compare=SENS.get("compare"),
        spare_cores=SENS.get("spare_cores"),
        seed=config["seed"],
        dimensions=SENS.get("dimensions"),
        cgroup=SENS.get("cgroup"),
        network=SENS.get("network"),
        timeout_s=SENS.get("timeout_s"),
        monitor_interval_s=SENS.get("monitor_interval_s"),
        repeats=SENS.get("repeats"),
        baseline_repeats=SENS.get("baseline_repeats"),
        replay=lambda wc: _sens_replay_settings(),
    log:
        f"{LOGS}/sensitivity/profile/{{sprog}}.log",
    benchmark:
        f"{BENCH}/sensitivity/profile/{{sprog}}.tsv"
    # a profiling campaign measures how the program runs with less CPU: it must not share the
    # machine with other jobs, so it takes every core Snakemake was given
    threads: workflow.cores
    resources:
        mem_mb=1000,
        runtime=120,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_profile.py"


rule sensitivity_figure:
    input:
        grid=f"{RESULTS}/sensitivity/{{sprog}}.parquet",
        summary=f"{RESULTS}/sensitivity/{{sprog}}.json",
    output:
        report(
            f"{RESULTS}/sensitivity/figures/{{sprog}}.png",
            caption="../report/sensitivity/profile.rst",
            category="5. Resource sensitivity",
            subcategory="profiles",
            labels={"program": "{sprog}"},
        ),
    wildcard_constraints:
        sprog=SPROG,
    log:
        f"{LOGS}/sensitivity/figure/{{sprog}}.log",
    benchmark:
        f"{BENCH}/sensitivity/figure/{{sprog}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_figure.py"


rule sensitivity_summary:
    input:
        expand(f"{RESULTS}/sensitivity/{{sprog}}.json", sprog=SENS_PROGRAMS),
    output:
        table=f"{RESULTS}/sensitivity/summary.parquet",
        csv=report(
            f"{RESULTS}/sensitivity/summary.csv",
            caption="../report/sensitivity/profiles_summary.rst",
            category="5. Resource sensitivity",
            subcategory="profiles",
        ),
    log:
        f"{LOGS}/sensitivity/summary.log",
    benchmark:
        f"{BENCH}/sensitivity/summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_summary.py"


rule sensitivity_arcp_fetch:
    input:
        zip=_sens_arcp_local_zip,
    output:
        f"{ARCP}/raw_data.zip",
    params:
        url=SENS_SOURCE.get("url"),
        sha256=SENS_SOURCE.get("sha256"),
    log:
        f"{LOGS}/sensitivity/arcp_fetch.log",
    benchmark:
        f"{BENCH}/sensitivity/arcp_fetch.tsv"
    localrule: True
    threads: 1
    resources:
        mem_mb=200,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_arcp_fetch.py"


rule sensitivity_arcp_table:
    input:
        f"{ARCP}/raw_data.zip",
    output:
        f"{ARCP}/arcp_measurements.csv",
    log:
        f"{LOGS}/sensitivity/arcp_table.log",
    benchmark:
        f"{BENCH}/sensitivity/arcp_table.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_arcp_table.py"


rule sensitivity_replay_eval:
    input:
        data=sensitivity_replay_table(),
    output:
        results=f"{RESULTS}/paper/sensitivity_eval.parquet",
        cells=f"{RESULTS}/paper/sensitivity_cells.parquet",
        table=report(
            f"{RESULTS}/paper/sensitivity_table.csv",
            caption="../report/sensitivity/table.rst",
            category="5. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        markdown=f"{RESULTS}/paper/sensitivity_table.md",
        summary=report(
            f"{RESULTS}/paper/sensitivity_summary.csv",
            caption="../report/sensitivity/summary.rst",
            category="5. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
    params:
        epsilons=SENS_REPLAY.get("epsilons"),
        programs=SENS_REPLAY.get("programs"),
        layouts=SENS_REPLAY.get("layouts"),
        ceiling=SENS_REPLAY.get("ceiling"),
        peaks=SENS_REPLAY.get("peaks"),
        lhs_repeats=SENS_REPLAY.get("lhs_repeats"),
        seed=config["seed"],
    log:
        f"{LOGS}/sensitivity/replay_eval.log",
    benchmark:
        f"{BENCH}/sensitivity/replay_eval.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_replay_eval.py"


rule sensitivity_replay_figures:
    input:
        results=f"{RESULTS}/paper/sensitivity_eval.parquet",
        cells=f"{RESULTS}/paper/sensitivity_cells.parquet",
        table=f"{RESULTS}/paper/sensitivity_table.csv",
        summary=f"{RESULTS}/paper/sensitivity_summary.csv",
    output:
        error=report(
            f"{RESULTS}/paper/sensitivity_error_vs_epsilon.png",
            caption="../report/sensitivity/error_vs_epsilon.rst",
            category="5. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        lhs=report(
            f"{RESULTS}/paper/sensitivity_binary_vs_lhs.png",
            caption="../report/sensitivity/binary_vs_lhs.rst",
            category="5. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        steps=report(
            f"{RESULTS}/paper/sensitivity_steps.png",
            caption="../report/sensitivity/steps.rst",
            category="5. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        surfaces=report(
            f"{RESULTS}/paper/sensitivity_surfaces.png",
            caption="../report/sensitivity/surfaces.rst",
            category="5. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
    params:
        epsilon=SENS_REPLAY.get("figure_epsilon"),
        surfaces=SENS_REPLAY.get("surfaces"),
    log:
        f"{LOGS}/sensitivity/replay_figures.log",
    benchmark:
        f"{BENCH}/sensitivity/replay_figures.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_replay_figures.py"
