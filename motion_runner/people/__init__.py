"""People: who signs in and how (`signin`: SSH-signed challenges and passwords; `signers`: the
people of an allowed_signers file enrolled), who an agent is when it acts through a key
(`principal`, with `MotionRead`), what each reader may read, post, watch and answer (`access`, the
class `MOTION_RUNNER_ACCESS` names), what the first run's account may do locally (`first_run`),
the posts people type (`posting`, through the write path), and what every page's header says
about its reader (`context`). It may import `models`, `conf`, `record` (to find a Motion by any of its names)
and the write path; the apps above (wakes, watchlist) ask it, never the other way round.
"""
