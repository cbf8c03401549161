"""A stand-in for memory-lane's `conversations` app: its record's field shapes (read from
cryptograss/memory-lane's conversations/models.py and migrations 0012-0016), none of its code."""
