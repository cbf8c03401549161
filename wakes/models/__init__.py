"""The wakes app's models: who is woken, when, and what it may spend.

One module per concern (dials, overrides, in_force, listening, ledger, requests, steer, notices,
arrivals, shadow; wake_texts holds the wake lines' default texts); this package imports each
model class, so Django finds them all and `from wakes.models import Spend` keeps working for a
model. Everything else (in_force.resolve, dials.current_dials, the choices) is imported from the
module that defines it. These modules import the runner's models and the clock beside them (clock.py, the
wake rules' one notion of now, which every room reads) only.


- `Dials`: the one row of global defaults (every number in the wake rules), edited in the admin.
- `DialOverride`: per Motion, per agent, or per pair; blank fields inherit.
- `ListenState`: one row per (Motion, listening agent): the consider loop's whole memory.
  `due_at` is the only column the loop looks at (indexed): it holds the earliest moment the
  pair may need attention, NULL when nothing can be owed (resting). The loop's look is
  `due_at <= now`, so its cost follows the Motions that are active, not all of them.
- `Consideration`: one per claimed consideration (audit; dots and backoff hang on it).
- `MentionWake`: one per (message, mentioned agent): idempotent mention wakes.
- `Spend`: the ledger. Each screen and each turn a row with its dollars; a reservation is a row
  whose amount is what it may still spend until its turn settles it.
- `BudgetDay`: one row per day, locked by every reservation so a check and its spend are atomic.
- `TypingPing`: who is typing where (expires after a dial's seconds).
- `Notice`, `PushSubscription`: a person's answered @mentions, and the browsers pushed to.
- `Greeting`: a person's arrival and the one agent woken to greet them.
- `ShadowDecision`: a wake decided while `WAKES_SHADOW` is on, and not launched.
"""

from .arrivals import Greeting
from .dials import Dials
from .ledger import BudgetDay, Spend
from .listening import Consideration, ListenState, MentionWake, TypingPing
from .notices import Notice, PushSubscription
from .overrides import DialOverride
from .requests import AbilityRun, WakeRequest
from .shadow import ShadowDecision
from .steer import Steer

__all__ = [
    "AbilityRun",
    "BudgetDay",
    "Consideration",
    "DialOverride",
    "Dials",
    "Greeting",
    "ListenState",
    "MentionWake",
    "Notice",
    "PushSubscription",
    "ShadowDecision",
    "Spend",
    "Steer",
    "TypingPing",
    "WakeRequest",
]
