"""The results folder of a batch (docs/results-reference.md): run files written as runs finish, and the summary."""
