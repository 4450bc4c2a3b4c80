//! Layered skip rules for the files server (in progress).
