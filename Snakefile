# perfcast's workflow lives in workflow/Snakefile (the Snakemake workflow catalog's layout); this
# file lets `snakemake` run from the repository's root. See workflow/Snakefile for the targets.
include: "workflow/Snakefile"
