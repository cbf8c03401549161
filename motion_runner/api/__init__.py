"""The REST API (DRF) the thread's readers and the agents call: the thread's reads and people's
posts (`views`, with opaque cursors in `cursor`), the routes agents call with their key
(`agent_views`: the harness stream, quiet dots, Claude Code hooks; the stream's post itself in
`stream_batch`), stopping a turn (`stop`), taking back a post (`taking_back`), the thread's search
box (`search`), agent keys (`auth`), the request bounds
(`bounds`, `poll_caps`), a scram's refusal (`locked`), error bodies (`errors`, `outage`) and the
schema (`schema`, `serializers`). memory-lane's client routes are its own room's
(`motion_runner/memory_lane/routes.py`). It may import the runner's parts below it; wakes adds
its routes from above.
"""
