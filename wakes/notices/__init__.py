"""Notices: a person's @mention answered by an agent, kept per person (answers.py), shown in the
page's header and at GET /api/notices/ (api.py), and pushed to the browsers they subscribed
(push.py, sent by the `wakes.push_notices` task after the notice's commit)."""
