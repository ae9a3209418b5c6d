"""The ways ``replay --as client`` reaches a live server: its pipes (stdio) or HTTP."""
