"""Stage 6: parameter-sweep campaigns and their models (ARPE; docs/methods/sweep.md).

settings (the ``sweep:`` section) -> space (values, ranges, configurations) -> campaign_parser
(the section checked) -> campaign (the checked campaigns, commands rendered by
:mod:`perfcast.program`) -> sensors / runner (one measured run) -> table / arpe (the run table,
or ARPE's old results) -> design / ols / normalform / selection / analysis (polynomials by CV
order, the four OLS forms, the normal form, the best model, predictions) -> figures / artifacts
(our paper's table and figure); job_settings holds each job's settings and rules one function
per Snakemake rule.
"""
