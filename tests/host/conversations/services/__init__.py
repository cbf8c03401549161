"""Stand-ins for memory-lane's `conversations/services/` where the apps call into it: only what the
calls need, written from its code's facts (names and what they answer), not copied."""
