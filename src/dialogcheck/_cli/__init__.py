"""The command line: thin commands that parse options, call the API and pick an exit code."""
