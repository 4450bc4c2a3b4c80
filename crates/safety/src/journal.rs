//! Write-ahead undo journal of the files server (in progress).
