# groupcheck's pytest plugin: the `groupcheck` fixture (groupcheck/pytest_plugin.py).
pytest_plugins = ["groupcheck.pytest_plugin"]
