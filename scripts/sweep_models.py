"""Rule sweep_models: every model of a campaign, its tables and figures."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.rules import model

with rule_logging(snakemake):
    s = snakemake
    o = s.output
    model(s.input[0], dict(s.params.settings), campaign=s.wildcards.campaign, out_json=o.json,
          out_models=o.models, out_coefficients=o.coefficients, out_fitted=o.fitted,
          out_predictions=o.predictions, fig_fits=o.fits, fig_residuals=o.residuals)
