//! exec (in progress).
