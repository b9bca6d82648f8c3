"""Pictures of a trace: a sequence chart, an ownership timeline, the state graph of a small
exploration, a "let / then" explanation, and the HTML report that holds them.

Rendering is separate from the data: ``view.build_view`` turns a model path or the events
of an external trace into a ``TraceView``; the renderers read only that view and write
DOT or HTML text, escaping everything that came from a trace (``escape``).
"""
