"""What a run's environment did, in lines of text: the text and HTML views of a run both show these."""

from __future__ import annotations

from .._shown import counted, listed, shown
from ..results.model import EnvironmentInfo
from .styled import Styled

#: Faults and events a line names before it says "and N more".
SHOWN = 5


def world_lines(info: EnvironmentInfo) -> list[str]:
    """The environment, its calls and faults, then what the agent's own log and the environment disagree on."""
    schedule = f"faults on, seed {info.seed}" if info.faults_on else "faults off"
    head = f"environment {info.name}: {counted(info.calls, 'call')} answered ({schedule})"
    if info.faults:
        fired = listed([f"{fault.kind} on {fault.tool}" + (f" (event {fault.event})" if fault.event is not None else "") for fault in info.faults], SHOWN)
        head += f"; {counted(len(info.faults), 'fault')}: {fired}"
    lines = [head]
    if info.unanswered:
        lines.append(f"{counted(len(info.unanswered), 'call')} the agent reported, never answered by the environment: event {listed([str(i) for i in info.unanswered], SHOWN)}")
    if info.unreported:
        lines.append(f"{counted(len(info.unreported), 'call')} the environment answered, never reported by the agent: event {listed([str(i) for i in info.unreported], SHOWN)}")
    return lines


def world_text(info: EnvironmentInfo) -> Styled:
    """`world_lines` as a run's text shows them: the first as it is, what disagrees indented beneath it."""
    lines = world_lines(info)
    text = Styled(f"{shown(lines[0])}\n")
    for line in lines[1:]:
        text.append(f"  {shown(line)}\n", "yellow")
    return text


__all__ = ["world_lines", "world_text"]
