//! terminal (in progress).
