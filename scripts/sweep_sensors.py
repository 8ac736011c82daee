"""Rule sweep_sensors: what the host offers of a campaign's sensors; refuses a missing one."""
from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sweep.job_settings import SensorCheckSettings
from perfcast.sweep.rules import sensor_report

with rule_logging(snakemake):
    sensor_report(rule_settings(snakemake, SensorCheckSettings), out=snakemake.output[0])
