"""Rule sweep_models: every model of a campaign, its tables and figures."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.steps import model

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    o = s.output
    model(s.input[0], campaign=s.wildcards.campaign, parameters=list(s.params.parameters),
          analysis=dict(s.params.analysis), fit=dict(s.params.fit), out_json=o.json,
          out_models=o.models, out_coefficients=o.coefficients, out_fitted=o.fitted,
          out_predictions=o.predictions, fig_fits=o.fits, fig_residuals=o.residuals)
