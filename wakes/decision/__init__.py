"""The decision's inputs: who is mentioned (mentions), who vouches for full tools (trust), what
the room set in the thread for its agents (steering: listening, model, effort, reads,
discretion, rules, the scram; listening_scopes resolves listening by scope as memory-lane
does), and how the record is quoted to an agent so that no post can pass
for the runner's words (quoting: every prompt, the screen and steering's rules quote through it).

The lowest room: it imports wakes' models and settings and the runner, never another room.
"""
