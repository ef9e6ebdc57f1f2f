"""Moved to ``rankdebug.debugplan.job_env``; kept until supervise.job and supervise.adapters
import from there."""

from rankdebug.debugplan.job_env import JobRun as DebugPlan
from rankdebug.debugplan.job_env import package_dir

__all__ = ["DebugPlan", "package_dir"]
