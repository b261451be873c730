"""The pipeline."""

from .compose import STAGES, Model, Pipeline, Stage, trace

__all__ = ["STAGES", "Model", "Pipeline", "Stage", "trace"]
