"""wakes' HTTP: the Motion list and the thread page's wake parts (views, overview), the typing ping,
request cards and holds (api), the scram and the steer menus (api_steer), the timing knobs and the
consider $/day (api_timing), the wake preview page (preview), and their routes (urls, included by
motion_runner/urls.py).

The top room: it imports the others; nothing in wakes imports it but apps.py.
"""
