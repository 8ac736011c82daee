# Paper artifacts: each source's evaluation as tables (CSV + Markdown) and figures, regenerated
# from config by `snakemake paper` (results/paper/). Each stage contributes <stage>_paper_targets();
# `all` has those that need no download, `paper` all of them (the replay fetches the paper's data).
rule paper:
    input:
        paper_targets(),


rule model_paper:
    input:
        csv=f"{RESULTS}/model/evaluation.csv",
        md=f"{RESULTS}/model/evaluation.md",
        png=f"{RESULTS}/model/predicted_vs_measured.png",
    output:
        csv=f"{RESULTS}/paper/ipc_prediction.csv",
        md=f"{RESULTS}/paper/ipc_prediction.md",
        png=f"{RESULTS}/paper/ipc_prediction.png",
    log:
        f"{LOGS}/paper/ipc_prediction.log",
    benchmark:
        f"{JOB_TIMINGS}/paper/ipc_prediction.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    shell:
        "(cp {input.csv} {output.csv} && cp {input.md} {output.md} && cp {input.png} {output.png})"
        " > {log} 2>&1"
