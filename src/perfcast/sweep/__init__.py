"""Stage 6: parameter-sweep campaigns and their models (ARPE; docs/methods/sweep.md).

space (values, ranges, configurations) -> campaign (a checked config) -> sensors / measure /
runner (one measured run) -> table / arpe (the run table, or ARPE's old results) -> design /
ols / selection / analysis (polynomials by CV order, the four OLS forms, the best model,
predictions) -> figures / paper; steps holds one function per Snakemake script.
"""
