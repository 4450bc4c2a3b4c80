//! MCP wiring of the terminal server (in progress).
