"""The agent's world: tools with a state, answered in process, with faults drawn from a seed.

`load_environment(path)` reads `eval/environments/NAME.yml` into an `Environment`; `environment.start(seed)`
gives one run its own `RunEnvironment` (`tools`, `call(name, arguments)`, `events`, `initial_state`,
`state`); `run_seed` derives a run's seed from the batch's and the run's place in the plan.
The file format is described in docs/environment-reference.md.
"""

from .load import load_environment, project_of
from .model import Environment
from .run import AgentEnvironment, RunEnvironment
from .schedule import run_seed

__all__ = ["AgentEnvironment", "Environment", "RunEnvironment", "load_environment", "project_of", "run_seed"]
