"""The loopback servers of the connector tests, for simulations against real HTTP agents."""

from tests.connectors.conftest import _no_proxy, agent_server, rasa_server  # noqa: F401 - fixtures
