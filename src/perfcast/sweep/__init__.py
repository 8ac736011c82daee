"""Stage 6: parameter-sweep campaigns and their models (ARPE; docs/methods/sweep.md).

settings (the ``sweep:`` section) -> space (values, ranges, configurations) -> campaign (a
checked config, commands rendered by :mod:`perfcast.program`) -> sensors / runner (one measured
run) -> table / arpe (the run table, or ARPE's old results) -> design / ols / selection /
analysis (polynomials by CV order, the four OLS forms, the best model, predictions) -> figures /
artifacts (our paper's table and figure); rules holds one function per Snakemake rule.
"""
