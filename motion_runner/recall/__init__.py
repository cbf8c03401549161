"""The record, served to the woken agents as an MCP server (issue 35): `search`, `read` and
`remember` over the Messages, scoped by the turn that started the server.

- `passes`: the turn's record pass (the credential its generated MCP config carries, good only
  while the turn runs) and the server's launch config.
- `record`: what each tool answers, scoped by the turn: the agent may read it, and every reader
  of the woken Motion may read it (people/access.py, `readers_may_read`).
- `server`: the MCP server over stdio (the official `mcp` SDK), `manage.py record_mcp`, and
  `__main__` (`python -m motion_runner.recall ENV_FILE`: its pass read before Django starts).
- `http`: the same tools over MCP's streamable HTTP from one long-lived process
  (`manage.py serve_record`, which bin/serve starts), so a turn's start boots nothing.
"""
