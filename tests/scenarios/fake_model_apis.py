"""The scripted OpenAI Responses and Gemini APIs the Codex and Gemini CLI tests drive (shipped in wiretap.lab)."""

from wiretap.lab.model_apis import Call, FakeModelAPIs

__all__ = ["Call", "FakeModelAPIs"]
