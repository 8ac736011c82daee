# The run summary: per stage what ran, what did not and why, every target met or missed, the
# headline figures (perfcast.summary). Read from the stages' outputs; printed on the console by
# the Snakefile's onsuccess handler, and the report's first page. Functions: common/summary.smk.
# A local rule: a second of reading small files at the very end of a run, on the machine the
# user watches (on a cluster: the submit host, no queue wait for the run's last words).


rule run_summary:
    input:
        unpack(get_summary_inputs),
    output:
        json=f"{RESULTS}/summary.json",
        md=f"{RESULTS}/summary.md",
        html=report(
            f"{RESULTS}/summary.html",
            caption="../report/summary.rst",
            category="0. Summary",
        ),
        # the same without the page around it: the report's home page includes it
        fragment=f"{RESULTS}/summary.fragment.html",
    params:
        settings=summary_settings(),
    log:
        f"{LOGS}/summary.log",
    benchmark:
        f"{JOB_TIMINGS}/summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    localrule: True
    conda:
        CONDA_ENV
    script:
        "../../scripts/run_summary.py"
