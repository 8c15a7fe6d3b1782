"""Working on a build directory after compiling: replaying it, rebuilding edited artifacts."""
