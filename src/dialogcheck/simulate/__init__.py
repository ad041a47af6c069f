"""Simulating the user: a fixed script or an LLM in character, and the loop that talks to the agent."""
