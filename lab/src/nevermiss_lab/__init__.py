"""nevermiss-lab: the lab beside the nevermiss switch.

It drives the `nevermiss` binary through its JSON, CSV and HdrHistogram outputs and never
re-implements it: experiment specifications (YAML), sweeps run locally or on Dask, plots, the
automatic performance models of paper 004, and one reproduction per paper (docs/lab.md).
"""

__version__ = "0.1.0"
