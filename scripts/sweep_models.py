"""Rule sweep_models: every model of a campaign, its tables and figures."""
from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sweep.job_settings import ModelsSettings
from perfcast.sweep.rules import campaign_models

with rule_logging(snakemake):
    o = snakemake.output
    campaign_models(rule_settings(snakemake, ModelsSettings), runs=snakemake.input[0],
                    out_json=o.json, out_models=o.models, out_coefficients=o.coefficients,
                    out_fitted=o.fitted, out_predictions=o.predictions, fig_fits=o.fits,
                    fig_residuals=o.residuals)
