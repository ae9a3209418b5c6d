"""The lab: a probe server, a scripted model, and the investigation they make."""
