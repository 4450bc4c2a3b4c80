//! Terminal command policy (in progress).
pub mod layers;
