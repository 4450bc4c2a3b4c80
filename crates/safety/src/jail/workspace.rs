//! Workspace file operations through a directory handle (in progress).
