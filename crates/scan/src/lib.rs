//! Source scanner (filled in by the scanner work).
