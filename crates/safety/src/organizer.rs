//! The files-server request flow (in progress).
