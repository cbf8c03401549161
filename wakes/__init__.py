"""The wakes app: who is woken, when, and with what (mentions, the consider loop, the budget and
its ledger, the screen, the wake prompt and footer, the tool policy, the turn guards, abilities,
steering from the thread).

It imports motion_runner (its models, the runner's entry points, lib/, the seams in
motion_runner/signals.py, where it registers its receivers and hooks in WakesConfig.ready);
never watchlist, and never the record (motion_runner.record): the poller's fence reaches it
through the hook `signals.fenced_agent_providers` (import-linter holds both).
"""
