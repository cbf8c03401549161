"""The watchlist app: watches on things outside the Motion (wiki pages, GitHub, web pages,
contracts; `kinds/`), checked every cycle, a change said in the Motion as a post that may wake its
agents. The top layer: it imports wakes and motion_runner, nothing imports it.
"""
