"""The commands as library functions: each returns what its command says (an `answer.Answer`: its JSON document,
its text and its exit code), which the command line prints and the MCP server answers with.

One module per command; none is imported here, so a quick command loads only its own.
"""
