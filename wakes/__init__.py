"""The wakes app: who is woken, when, and with what.

Its rooms, each a package whose docstring says what it owns, listed lowest first (a room imports
only the rooms above it in this list; import-linter's acyclic contract holds it):

- `models/`: the rows (the dials and their texts, their overrides and the dials in force for a
  pair, listen states, the ledger, requests, steers, notices, greetings, shadow decisions), the
  wake lines' default texts and the rules' one notion of now (`models/clock.py`);
- `decision/`: the decision's inputs: mentions, trust, steering from the thread (listening by
  scope with it), and the quoting every prompt reads the record through;
- `money/`: budgets and reservations, the per-turn spend guard;
- `turn/`: a woken turn: its prompt, footer, wake line and issue 33's wake lines, the screen, the
  tool policy and clocks, its memory server, handoffs, ultracode, requests and commands, the
  tool-loop guard and compaction;
- `consider_loop/`: the signal receivers (handlers), the note, the look and claim, a
  consideration run, mention turns and their slots, the chain guard, arrivals, recovery, the dry
  run and the shadow report;
- `notices/`: what a person is told (answered you, mentioned you) in the list and by Web Push;
- `web/`: the pages, the API views and their routes.

At the top only what Django and Celery look for there (apps, admin, tasks, models/,
migrations/, management/), the app's settings (conf), abilities/ (the one extra thing a wake
may carry) and holds (a wake's hold, shown beside the thread), which several rooms share.

It imports motion_runner (its models, the runner's entry points, lib/, the seams in
motion_runner/signals.py, where it registers its receivers and hooks in WakesConfig.ready);
never watchlist, and never the record (motion_runner.record): the poller's fence reaches it
through the hook `signals.fenced_agent_providers` (import-linter holds both).
"""
