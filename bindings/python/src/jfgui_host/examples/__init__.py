"""Runnable examples shipped with the package: ``python -m jfgui_host.examples.counter``."""
