"""The consider loop and what feeds it: the receivers of the runner's signals (handlers: a post
written, a turn ended), a post's @mention read, decided and acted on once (mention_path,
mention_verdict), each post's note on the listening pairs' clocks (noting), the look
and claim (loop), a claimed consideration run (considering: budget, screen, wake), mention
turns (mention_turns, and slots: "all 4 turn slots are busy" while one waits for a worker), the
chain guard on agents waking agents (chains), arrivals greeted (arrivals), the recovery of lost
tasks and reservations (recovery), the dry run (`manage.py would_wake`) and the
shadow report (`manage.py shadow_report`: the decisions of `WAKES_SHADOW` beside the poller's turns).

Imports decision/, money/ and turn/, never web/.
"""
