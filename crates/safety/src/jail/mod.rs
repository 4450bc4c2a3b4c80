//! Path containment (in progress).
pub mod workspace;
