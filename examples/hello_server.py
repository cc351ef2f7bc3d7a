"""The getting-started server: one tool, over stdio."""

from mcpbind import Server, serve_stdio

server = Server("hello")


@server.tool()
def greet(name: str) -> str:
    """Say hello to someone."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    serve_stdio(server)
