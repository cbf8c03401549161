"""Money: the budgets and their atomic reservations (budget), and the per-turn dollar cap the
runner enforces as a turn streams (spend_guard). The ledger's rows are wakes.models.ledger.

Imports wakes' models and the runner only, never another room.
"""
